// pgjdbc against lakesoul serve: the statement fixes of issue 14 as pgjdbc
// drives them. pgjdbc sends typed parameters (varchar, int4), uses
// BEGIN READ ONLY for setReadOnly(true) with autocommit off, and SET SESSION
// CHARACTERISTICS / SHOW TRANSACTION ISOLATION LEVEL for the isolation level.
// Prints one line per fact for the Go test.
// usage: java WireJdbc <url> <user> <password> <schema>
import java.sql.*;

public class WireJdbc {
    static String state(Connection c, String sql) {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
            return "OK";
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    public static void main(String[] args) throws Exception {
        String s = args[3];
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE SCHEMA " + s);
                st.execute("CREATE TABLE " + s + ".ap (id int, c text)");
                st.execute("CREATE TABLE " + s + ".pk (id int PRIMARY KEY, c text, n int NOT NULL)");
                st.execute("INSERT INTO " + s + ".ap VALUES (1, 'a'), (2, 'b')");
                st.execute("INSERT INTO " + s + ".pk VALUES (1, 'a', 1), (2, 'b', 2)");
            }
            // Item 1: typed parameters in UPDATE of both kinds of tables.
            for (String t : new String[] {"ap", "pk"}) {
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + s + "." + t + " SET c = ? WHERE id = ?")) {
                    ps.setString(1, "x");
                    ps.setInt(2, 1);
                    System.out.println("UPDATE_" + t.toUpperCase() + " " + ps.executeUpdate());
                }
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + s + "." + t + " WHERE id = ?")) {
                    ps.setInt(1, 2);
                    System.out.println("DELETE_" + t.toUpperCase() + " " + ps.executeUpdate());
                }
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, c FROM " + s + "." + t + " ORDER BY id")) {
                    StringBuilder b = new StringBuilder("ROWS_" + t.toUpperCase());
                    while (rs.next()) b.append(' ').append(rs.getInt(1)).append(':').append(rs.getString(2));
                    System.out.println(b);
                }
            }
            // Item 5: isolation level and read-only transactions.
            System.out.println("ISOLATION " + c.getTransactionIsolation());
            c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            System.out.println("ISOLATION_SET " + c.getTransactionIsolation());
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            c.setAutoCommit(false);
            c.setReadOnly(true);
            System.out.println("READ_ONLY_SELECT " + state(c, "SELECT count(*) FROM " + s + ".pk"));
            System.out.println("READ_ONLY_INSERT " + state(c, "INSERT INTO " + s + ".pk VALUES (3, 'c', 3)"));
            c.rollback();
            c.setReadOnly(false);
            // Item 4: DDL with autocommit off follows commit and rollback.
            System.out.println("CREATE " + state(c, "CREATE TABLE " + s + ".tx (id int PRIMARY KEY)"));
            System.out.println("INSERT_NEW " + state(c, "INSERT INTO " + s + ".tx VALUES (1)"));
            c.rollback();
            System.out.println("AFTER_ROLLBACK " + state(c, "SELECT * FROM " + s + ".tx"));
            c.rollback();
            state(c, "CREATE TABLE " + s + ".tx (id int PRIMARY KEY)");
            state(c, "INSERT INTO " + s + ".tx VALUES (1)");
            c.commit();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + s + ".tx")) {
                rs.next();
                System.out.println("AFTER_COMMIT " + rs.getInt(1));
            }
            c.commit();
            c.setAutoCommit(true);
            // Bad input: SQLSTATEs, and the connection goes on.
            System.out.println("SERIAL " + state(c, "CREATE TABLE " + s + ".ser (id bigserial PRIMARY KEY)"));
            System.out.println("PARTIAL_NEW_KEY " + state(c, "INSERT INTO " + s + ".pk (id, c) VALUES (9, 'z')"));
            System.out.println("UNSUPPORTED " + state(c, "CLUSTER x"));
            System.out.println("SYNTAX " + state(c, "SELEC 1"));
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
                rs.next();
                System.out.println("AFTER_ERRORS " + rs.getInt(1));
            }
            // executeBatch in autocommit (Flink's JDBC sink): the batch's
            // statements, up to one Sync, are one implicit transaction — a
            // failing third INSERT keeps none, a good batch is one commit.
            state(c, "CREATE TABLE " + s + ".bt (id int PRIMARY KEY, v text)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + s + ".bt VALUES (?, 'v' || (10 / ?))")) {
                int[][] rows = {{1, 1}, {2, 1}, {3, 0}};
                for (int[] r : rows) {
                    ps.setInt(1, r[0]);
                    ps.setInt(2, r[1]);
                    ps.addBatch();
                }
                try {
                    ps.executeBatch();
                    System.out.println("BATCH_FAILED none");
                } catch (BatchUpdateException e) {
                    System.out.println("BATCH_FAILED " + e.getSQLState());
                }
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + s + ".bt")) {
                rs.next();
                System.out.println("AFTER_BATCH_FAILURE " + rs.getInt(1));
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + s + ".bt VALUES (?, 'v')")) {
                for (int i = 1; i <= 50; i++) {
                    ps.setInt(1, i);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + s + ".bt");
                    Statement st2 = c.createStatement(); ResultSet rs2 = st2.executeQuery("SELECT count(*) FROM lakesoul.history('" + s + ".bt')")) {
                rs.next();
                rs2.next();
                System.out.println("BATCH_ROWS " + rs.getInt(1) + " COMMITS " + rs2.getInt(1));
            }
        }
        System.out.println("DONE");
    }
}
