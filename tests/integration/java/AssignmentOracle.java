/*
 * Test oracle for tests/integration/test_assignment_matches_kafka.py: runs Kafka's own Java/Scala
 * code (AdminUtils.assignReplicasToBrokers, AdminZkClient.createNewPartitionsAssignment and
 * org.apache.kafka.common.internals.Topic) on many cases read from stdin, one JVM for all of them.
 *
 * Input, one case per line (fields separated by single spaces):
 *   A <nPartitions> <replicationFactor> <fixedStartIndex> <startPartitionId> <brokers>
 *   N <numPartitions> <brokers> <existing>
 *   T <hexName>
 *   C <hexNameA> <hexNameB>
 * <brokers> is a comma-separated list of "id" (no rack) or "id:hexRack" (rack, UTF-8 hex; "id:" is the
 * empty rack), or "-" for no brokers, kept in the given order. <existing> is "p=r,r;p=r,r" ("p=" is an
 * empty replica list).
 *
 * Output, one line per case, same order:
 *   OK <p>=<r>,<r>;<p>=...     partitions in ascending order
 *   ERR <ExceptionSimpleName> <hexMessage>
 *   T <valid 0|1> <internal 0|1> <collisionChars 0|1> <hexValidateMessage or ->
 *   C <0|1>
 */

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import kafka.controller.ReplicaAssignment;
import kafka.zk.AdminZkClient;
import org.apache.kafka.admin.AdminUtils;
import org.apache.kafka.admin.BrokerMetadata;
import org.apache.kafka.common.internals.Topic;
import scala.jdk.javaapi.CollectionConverters;

public final class AssignmentOracle {

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        AdminZkClient adminZkClient = new AdminZkClient(null, scala.Option.empty());
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty())
                continue;
            String[] f = line.split(" ", -1);
            String result;
            try {
                switch (f[0]) {
                    case "A":
                        result = ok(AdminUtils.assignReplicasToBrokers(brokers(f[5]), Integer.parseInt(f[1]),
                            Integer.parseInt(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4])));
                        break;
                    case "N":
                        result = newPartitions(adminZkClient, Integer.parseInt(f[1]), brokers(f[2]), f[3]);
                        break;
                    case "T":
                        result = topic(unhex(f[1]));
                        break;
                    case "C":
                        result = "C " + (Topic.hasCollision(unhex(f[1]), unhex(f[2])) ? 1 : 0);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown case kind: " + line);
                }
            } catch (RuntimeException e) {
                String message = e.getMessage() == null ? "" : e.getMessage();
                result = "ERR " + e.getClass().getSimpleName() + " " + hex(message);
            }
            out.write(result);
            out.write('\n');
        }
        out.flush();
    }

    private static String newPartitions(AdminZkClient client, int numPartitions, List<BrokerMetadata> brokers,
                                        String existingText) {
        Map<Object, ReplicaAssignment> existing = new HashMap<>();
        for (String entry : existingText.split(";")) {
            String[] kv = entry.split("=", -1);
            List<Object> replicas = new ArrayList<>();
            if (!kv[1].isEmpty())
                for (String r : kv[1].split(","))
                    replicas.add(Integer.parseInt(r));
            existing.put(Integer.parseInt(kv[0]), ReplicaAssignment.apply(CollectionConverters.asScala(replicas)));
        }
        scala.collection.Map<Object, ReplicaAssignment> added = client.createNewPartitionsAssignment(
            "oracle-topic", CollectionConverters.asScala(existing), CollectionConverters.asScala(brokers),
            numPartitions, scala.Option.empty());
        Map<Integer, List<Integer>> plain = new HashMap<>();
        for (Map.Entry<Object, ReplicaAssignment> e : CollectionConverters.asJava(added).entrySet()) {
            List<Integer> replicas = new ArrayList<>();
            for (Object r : CollectionConverters.asJava(e.getValue().replicas()))
                replicas.add((Integer) r);
            plain.put((Integer) e.getKey(), replicas);
        }
        return ok(plain);
    }

    private static String topic(String name) {
        String message = "-";
        try {
            Topic.validate(name);
        } catch (RuntimeException e) {
            message = hex(e.getMessage());
        }
        return "T " + (Topic.isValid(name) ? 1 : 0) + " " + (Topic.isInternal(name) ? 1 : 0) + " "
            + (Topic.hasCollisionChars(name) ? 1 : 0) + " " + message;
    }

    private static List<BrokerMetadata> brokers(String text) {
        List<BrokerMetadata> brokers = new ArrayList<>();
        if (text.equals("-"))
            return brokers;
        for (String entry : text.split(",")) {
            int colon = entry.indexOf(':');
            if (colon < 0)
                brokers.add(new BrokerMetadata(Integer.parseInt(entry), Optional.empty()));
            else
                brokers.add(new BrokerMetadata(Integer.parseInt(entry.substring(0, colon)),
                    Optional.of(unhex(entry.substring(colon + 1)))));
        }
        return brokers;
    }

    private static String ok(Map<Integer, List<Integer>> assignment) {
        StringBuilder sb = new StringBuilder("OK ");
        boolean first = true;
        for (Map.Entry<Integer, List<Integer>> e : new TreeMap<>(assignment).entrySet()) {
            if (!first)
                sb.append(';');
            first = false;
            sb.append(e.getKey()).append('=');
            for (int i = 0; i < e.getValue().size(); i++) {
                if (i > 0)
                    sb.append(',');
                sb.append(e.getValue().get(i));
            }
        }
        return sb.toString();
    }

    private static String unhex(String text) {
        byte[] bytes = new byte[text.length() / 2];
        for (int i = 0; i < bytes.length; i++)
            bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String hex(String text) {
        StringBuilder sb = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8))
            sb.append(String.format("%02x", b));
        return sb.toString();
    }
}
