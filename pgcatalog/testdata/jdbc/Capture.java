import java.sql.*;
public class Capture {
  static void drain(ResultSet rs) throws SQLException { int n=0; while (rs.next()) n++; System.out.println("rows "+n); rs.close(); }
  public static void main(String[] a) throws Exception {
    Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5499/lake?user=postgres");
    DatabaseMetaData md = c.getMetaData();
    Statement st = c.createStatement();
    st.execute("SELECT 'mark:getSchemas'"); drain(md.getSchemas());
    st.execute("SELECT 'mark:getSchemasPattern'"); drain(md.getSchemas(null, "s"));
    st.execute("SELECT 'mark:getTables'"); drain(md.getTables(null, "s", "%", new String[]{"TABLE"}));
    st.execute("SELECT 'mark:getTablesAll'"); drain(md.getTables(null, null, "%", null));
    st.execute("SELECT 'mark:getColumns'"); drain(md.getColumns(null, "s", "t", "%"));
    st.execute("SELECT 'mark:getPrimaryKeys'"); drain(md.getPrimaryKeys(null, "s", "t"));
    st.execute("SELECT 'mark:getIndexInfo'"); drain(md.getIndexInfo(null, "s", "t", false, true));
    st.execute("SELECT 'mark:end'");
    c.close();
  }
}
