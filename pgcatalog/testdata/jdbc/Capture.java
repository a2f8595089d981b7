// Capture calls the DatabaseMetaData methods whose queries testdata/jdbc
// holds, each preceded by the marker query SELECT 'mark:<name>'; see
// capture.sh, which runs it and splits the server log at the markers.
//
// Usage: java -cp /usr/share/java/postgresql.jar Capture.java JDBC-URL
// The database must hold a real table s.t with a bigint primary key "id".
import java.sql.*;

public class Capture {
  static void drain(ResultSet rs) throws SQLException {
    while (rs.next()) {
    }
    rs.close();
  }

  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0]); Statement st = c.createStatement()) {
      DatabaseMetaData md = c.getMetaData();
      st.execute("SELECT 'mark:getSchemas'");
      drain(md.getSchemas());
      st.execute("SELECT 'mark:getSchemasPattern'");
      drain(md.getSchemas(null, "s"));
      st.execute("SELECT 'mark:getTables'");
      drain(md.getTables(null, "s", "%", new String[] {"TABLE"}));
      st.execute("SELECT 'mark:getTablesAll'");
      drain(md.getTables(null, null, "%", null));
      st.execute("SELECT 'mark:getColumns'");
      drain(md.getColumns(null, "s", "t", "%"));
      st.execute("SELECT 'mark:getPrimaryKeys'");
      drain(md.getPrimaryKeys(null, "s", "t"));
      st.execute("SELECT 'mark:getIndexInfo'");
      drain(md.getIndexInfo(null, "s", "t", false, true));
      st.execute("SELECT 'mark:end'");
    }
  }
}
