import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts Neo4j Community in-process with the Bolt connector, as configured by
 * HOME/neo4j.conf, and keeps it running until the process receives SIGTERM.
 *
 * The password for the built-in "neo4j" user is read from the environment
 * (never from the command line, where other users could see it).
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Launcher HOME");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        Path conf = home.resolve("neo4j.conf");
        if (!Files.isRegularFile(conf)) {
            System.err.println("missing configuration: " + conf);
            System.exit(2);
        }
        DatabaseManagementService dbms =
                new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(conf).build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("metisgraph-neo4j: stopping");
            dbms.shutdown();
            stopped.countDown();
        }, "metisgraph-neo4j-shutdown"));

        String password = System.getenv("METISGRAPH_NEO4J_PASSWORD");
        if (password != null && !password.isEmpty()) {
            try {
                dbms.database("system").executeTransactionally(
                        "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                        Map.of("password", password));
            } catch (RuntimeException e) {
                // Restarting with the same password: Neo4j refuses to "change" it to itself.
                String message = String.valueOf(e.getMessage());
                if (!message.contains("cannot be the same")) {
                    throw e;
                }
            }
        }
        System.out.println("metisgraph-neo4j: ready");
        System.out.flush();
        stopped.await();
    }
}
