// pgjdbc against lakesoul serve: what ORMs built on JDBC send for generated
// keys. getGeneratedKeys makes pgjdbc append RETURNING to the INSERT (RETURNING *
// for RETURN_GENERATED_KEYS, RETURNING "id" for a column list); the keys come
// from a bigserial column's sequence and a DEFAULT. Prints one line per fact.
// usage: java SurfaceJdbc <url> <user> <password> <schema>
import java.sql.*;

public class SurfaceJdbc {
    public static void main(String[] args) throws Exception {
        String s = args[3];
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE SCHEMA " + s);
                st.execute("CREATE TABLE " + s + ".item (id bigserial PRIMARY KEY, name text NOT NULL, qty int DEFAULT 1)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + s + ".item (name) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "a");
                ps.executeUpdate();
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    rs.next();
                    System.out.println("KEYS_ALL " + rs.getLong("id") + " " + rs.getString("name") + " " + rs.getInt("qty"));
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + s + ".item (name, qty) VALUES (?, ?)", new String[] {"id"})) {
                for (String n : new String[] {"b", "c"}) {
                    ps.setString(1, n);
                    ps.setInt(2, 5);
                    ps.addBatch();
                }
                ps.executeBatch();
                StringBuilder keys = new StringBuilder();
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    while (rs.next()) {
                        keys.append(' ').append(rs.getLong(1));
                    }
                }
                System.out.println("KEYS_BATCH" + keys);
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + s + ".item SET qty = qty + ? WHERE id = ? RETURNING id, qty")) {
                ps.setInt(1, 10);
                ps.setLong(2, 2);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    System.out.println("UPDATE_RETURNING " + rs.getLong(1) + " " + rs.getInt(2));
                }
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("DELETE FROM " + s + ".item WHERE id = 3 RETURNING name")) {
                rs.next();
                System.out.println("DELETE_RETURNING " + rs.getString(1));
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, name, qty FROM " + s + ".item ORDER BY id")) {
                StringBuilder b = new StringBuilder();
                while (rs.next()) {
                    b.append(' ').append(rs.getLong(1)).append(':').append(rs.getString(2)).append(':').append(rs.getInt(3));
                }
                System.out.println("ROWS" + b);
            }
            System.out.println("DONE");
        }
    }
}
