/*
 * Kafka's own `kafka-reassign-partitions --generate` planner on a snapshot, no cluster needed: the
 * private static ReassignPartitionsCommand.calculateAssignment(currentAssignment, brokers) of the
 * Kafka jars on the classpath, called by reflection (what --generate calls once it has read the
 * topics and brokers through the Admin API). Used by benchmarks/peers_bench.py.
 *
 * Usage: java -cp "classes:<kafka libs>/*" KafkaCalculateAssignment IN OUT
 * IN: "broker <id> <rack>" lines (rack "-" for none), then "partition <topic> <p> <r1,r2,...>".
 * OUT: the proposed assignment, "<topic> <p> <r1,r2,...>" per partition.
 * Prints one JSON line: {"seconds": <calculateAssignment wall time>, "partitions": <count>}.
 */
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.admin.BrokerMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.tools.reassign.ReassignPartitionsCommand;

public class KafkaCalculateAssignment {
    public static void main(String[] args) throws Exception {
        List<BrokerMetadata> brokers = new ArrayList<>();
        Map<TopicPartition, List<Integer>> current = new HashMap<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split(" ");
                if (f[0].equals("broker")) {
                    Optional<String> rack = f[2].equals("-") ? Optional.empty() : Optional.of(f[2]);
                    brokers.add(new BrokerMetadata(Integer.parseInt(f[1]), rack));
                } else if (f[0].equals("partition")) {
                    List<Integer> replicas = new ArrayList<>();
                    for (String r : f[3].split(",")) {
                        replicas.add(Integer.parseInt(r));
                    }
                    current.put(new TopicPartition(f[1], Integer.parseInt(f[2])), replicas);
                }
            }
        }
        Method calculate = ReassignPartitionsCommand.class.getDeclaredMethod(
            "calculateAssignment", Map.class, List.class);
        calculate.setAccessible(true);
        long started = System.nanoTime();
        @SuppressWarnings("unchecked")
        Map<TopicPartition, List<Integer>> proposed =
            (Map<TopicPartition, List<Integer>>) calculate.invoke(null, current, brokers);
        double seconds = (System.nanoTime() - started) / 1e9;
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[1]))) {
            for (Map.Entry<TopicPartition, List<Integer>> e : proposed.entrySet()) {
                StringBuilder row = new StringBuilder();
                row.append(e.getKey().topic()).append(' ').append(e.getKey().partition()).append(' ');
                for (int i = 0; i < e.getValue().size(); i++) {
                    row.append(i == 0 ? "" : ",").append(e.getValue().get(i));
                }
                out.write(row.append('\n').toString());
            }
        }
        System.out.println("{\"seconds\": " + seconds + ", \"partitions\": " + proposed.size() + "}");
    }
}
