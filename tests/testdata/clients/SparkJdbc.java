import java.math.BigDecimal;
import java.sql.*;
import java.util.*;

/**
 * Replays what Spark's JDBC data source and JDBC sink, and Flink's JDBC
 * upsert sink, send through pgjdbc: the batched INSERT sink with autocommit
 * off, the schema probe and its ResultSetMetaData calls, four partitioned
 * range reads with a fetch size (cursor-style portals) and autocommit off,
 * DatabaseMetaData, and the ON CONFLICT upsert sink. Prints one line per
 * fact for the Go test to check; any exception fails the run.
 *
 * Usage: SparkJdbc <jdbc url> <user> <password> <schema>
 */
public class SparkJdbc {
    static String url, user, password, schema;

    static Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        return DriverManager.getConnection(url, p);
    }

    public static void main(String[] args) throws Exception {
        url = args[0]; user = args[1]; password = args[2]; schema = args[3];
        String t = schema + ".t";
        try (Connection c = connect(); Statement st = c.createStatement()) {
            System.out.println("SERVER " + c.getMetaData().getDatabaseProductVersion());
            st.execute("CREATE SCHEMA " + schema);
            st.execute("CREATE TABLE " + t + " (id bigint, name text, amount numeric(12,2), d date, ts timestamp, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)");
        }

        // Spark's JDBC sink: autocommit off, batched prepared INSERTs, commit.
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO " + t + " (\"id\",\"name\",\"amount\",\"d\",\"ts\") VALUES (?,?,?,?,?)")) {
                for (int i = 0; i < 200; i++) {
                    ps.setLong(1, i);
                    ps.setString(2, "name " + i);
                    ps.setBigDecimal(3, new BigDecimal(i + ".25"));
                    ps.setDate(4, java.sql.Date.valueOf("2026-01-" + String.format("%02d", 1 + i % 28)));
                    ps.setTimestamp(5, Timestamp.valueOf("2026-02-03 04:05:06.5"));
                    ps.addBatch();
                    if (i % 100 == 99) ps.executeBatch();
                }
                ps.executeBatch();
            }
            try (Connection other = connect(); ResultSet rs = other.createStatement().executeQuery("SELECT count(*) FROM " + t)) {
                rs.next();
                System.out.println("UNCOMMITTED_VISIBLE " + rs.getLong(1));
            }
            c.commit();
        }
        try (Connection c = connect(); ResultSet rs = c.createStatement().executeQuery("SELECT count(*), sum(amount) FROM " + t)) {
            rs.next();
            System.out.println("SINK " + rs.getLong(1) + " " + rs.getBigDecimal(2));
        }
        // A rolled-back batch leaves nothing.
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            c.createStatement().executeUpdate("INSERT INTO " + t + " VALUES (1000, 'x', 1, '2026-01-01', '2026-01-01 00:00:00')");
            c.rollback();
            ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM " + t + " WHERE id = 1000");
            rs.next();
            System.out.println("ROLLBACK " + rs.getLong(1));
            c.commit();
        }

        // Spark's schema probe and the metadata calls it makes.
        try (Connection c = connect()) {
            PreparedStatement ps = c.prepareStatement("SELECT * FROM " + t + " WHERE 1=0");
            ps.setQueryTimeout(0);
            ResultSet rs = ps.executeQuery();
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                System.out.println("PROBE " + md.getColumnLabel(i) + " " + md.getColumnType(i) + " " + md.getColumnTypeName(i)
                        + " " + md.getPrecision(i) + " " + md.getScale(i) + " " + md.isSigned(i) + " " + md.isNullable(i)
                        + " " + md.getTableName(i));
            }
            System.out.println("PROBE_ROWS " + (rs.next() ? "some" : "none"));
            ps.close();
            // The same probe over a subquery, as with Spark's "query" option.
            ps = c.prepareStatement("SELECT * FROM (SELECT id, amount FROM " + t + ") SPARK_GEN_SUBQ_0 WHERE 1=0");
            md = ps.executeQuery().getMetaData();
            System.out.println("PROBE_SUBQ " + md.getColumnCount() + " " + md.getColumnTypeName(2) + " " + md.getPrecision(2) + " " + md.getScale(2));
        }

        // Four partitioned range reads, each on its own connection, with a
        // fetch size and autocommit off (server-side portal, PortalSuspended).
        String[] where = {"\"id\" < 50 or \"id\" is null", "\"id\" >= 50 AND \"id\" < 100", "\"id\" >= 100 AND \"id\" < 150", "\"id\" >= 150"};
        long rows = 0, sum = 0;
        for (String w : where) {
            try (Connection c = connect()) {
                c.setAutoCommit(false);
                PreparedStatement ps = c.prepareStatement("SELECT \"id\",\"name\",\"amount\",\"d\",\"ts\" FROM " + t + " WHERE (" + w + ")");
                ps.setFetchSize(7);
                ResultSet rs = ps.executeQuery();
                while (rs.next()) {
                    rows++;
                    sum += rs.getLong(1);
                    if (rs.getLong(1) == 42) {
                        System.out.println("ROW42 " + rs.getString(2) + " " + rs.getBigDecimal(3) + " " + rs.getDate(4) + " " + rs.getTimestamp(5));
                    }
                }
                rs.close();
                c.commit();
            }
        }
        System.out.println("PARTITIONED " + rows + " " + sum);

        // DatabaseMetaData.
        try (Connection c = connect()) {
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getSchemas()) {
                boolean found = false;
                while (rs.next()) found |= rs.getString("TABLE_SCHEM").equals(schema);
                System.out.println("SCHEMAS " + found);
            }
            try (ResultSet rs = md.getTables(null, schema, "%", new String[]{"TABLE"})) {
                while (rs.next()) System.out.println("TABLE " + rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE"));
            }
            try (ResultSet rs = md.getColumns(null, schema, "t", null)) {
                while (rs.next()) System.out.println("COLUMN " + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("DATA_TYPE") + " " + rs.getInt("ORDINAL_POSITION") + " " + rs.getString("IS_NULLABLE"));
            }
            try (ResultSet rs = md.getPrimaryKeys(null, schema, "t")) {
                while (rs.next()) System.out.println("PK " + rs.getString("COLUMN_NAME") + " " + rs.getInt("KEY_SEQ"));
            }
        }

        // Flink's JDBC upsert sink: INSERT … ON CONFLICT … DO UPDATE, batched.
        try (Connection c = connect()) {
            PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + "(id, name, amount, d, ts) VALUES (?, ?, ?, ?, ?) "
                    + "ON CONFLICT (id) DO UPDATE SET name=EXCLUDED.name, amount=EXCLUDED.amount, d=EXCLUDED.d, ts=EXCLUDED.ts");
            for (int i = 190; i < 210; i++) {
                ps.setLong(1, i);
                ps.setString(2, "upserted " + i);
                ps.setBigDecimal(3, new BigDecimal("1.00"));
                ps.setDate(4, java.sql.Date.valueOf("2026-03-01"));
                ps.setTimestamp(5, Timestamp.valueOf("2026-03-01 00:00:00"));
                ps.addBatch();
            }
            ps.executeBatch();
            ResultSet rs = c.createStatement().executeQuery("SELECT count(*), count(*) FILTER (WHERE name LIKE 'upserted%') FROM " + t);
            rs.next();
            System.out.println("UPSERT " + rs.getLong(1) + " " + rs.getLong(2));
        } catch (SQLException e) {
            System.out.println("UPSERT_ERROR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
        }
        System.out.println("DONE");
    }
}
