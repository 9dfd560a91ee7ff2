// What one Kafka line's own classes say about topic-level configs, read by reflection so that one
// source compiles against every line from 0.10.0 to 3.9 (Scala kafka.log.LogConfig$ before 3.x's
// storage module, Java org.apache.kafka.storage.internals.log.LogConfig after).
//
//   java -cp <line's jars>:<dir> TopicConfigFacts dump <release>   -> the line's LogConfig ConfigDef as JSON
//   java -cp <line's jars>:<dir> TopicConfigFacts probe FILE       -> one JSON line per "key<TAB>value" line
//
// dump: every key's type, default (as Kafka prints it) and validator as data; the accepted
// message.format.version strings (and 0.10.x's timestamp types, which only the constructor checks)
// are found by building a LogConfig with every release name and -IVn sub-version from 0.8.0 to 4.1.
// probe: FILE holds one JSON array ["key", "value", "key", "value", ...] per line; for each, whether
// the line accepts those overrides the way a starting broker reads it (LogConfig.fromProps: ConfigDef.parse,
// then the constructor) and the way its admin path does (LogConfig.validate). Used by
// devstack/topic_config_facts.py (scripts/generate-topic-config-table.py, tests/integration/test_topic_config_table.py).

import java.io.BufferedReader;
import java.io.FileReader;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.common.config.ConfigDef;

public class TopicConfigFacts {

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("dump")) {
            System.out.println(dump(args[1]));
        } else if (args.length == 2 && args[0].equals("probe")) {
            probe(args[1]);
        } else {
            System.err.println("usage: TopicConfigFacts dump RELEASE | probe FILE");
            System.exit(2);
        }
    }

    // ------------------------------------------------------------------ finding LogConfig

    static Class<?> logConfigClass() throws ClassNotFoundException {
        try {
            return Class.forName("org.apache.kafka.storage.internals.log.LogConfig");
        } catch (ClassNotFoundException e) {
            return Class.forName("kafka.log.LogConfig");
        }
    }

    /** The topic-level ConfigDef: the one holding segment.bytes (3.x also has the broker-level one). */
    static ConfigDef configDef() throws Exception {
        Class<?> javaClass = logConfigClass();
        if (!javaClass.getName().startsWith("kafka.")) {
            for (Field f : javaClass.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) && ConfigDef.class.isAssignableFrom(f.getType())) {
                    f.setAccessible(true);
                    ConfigDef def = (ConfigDef) f.get(null);
                    if (def.configKeys().containsKey("segment.bytes")) {
                        return def;
                    }
                }
            }
            throw new IllegalStateException("no topic-level ConfigDef in " + javaClass.getName());
        }
        Class<?> object = Class.forName("kafka.log.LogConfig$");
        Object module = object.getField("MODULE$").get(null);
        for (Field f : object.getDeclaredFields()) {
            if (ConfigDef.class.isAssignableFrom(f.getType())) {
                f.setAccessible(true);
                return (ConfigDef) f.get(module);
            }
        }
        for (Method m : object.getDeclaredMethods()) {
            if (m.getParameterCount() == 0 && ConfigDef.class.isAssignableFrom(m.getReturnType())) {
                m.setAccessible(true);
                return (ConfigDef) m.invoke(module);
            }
        }
        throw new IllegalStateException("no ConfigDef in kafka.log.LogConfig$");
    }

    /**
     * Builds the LogConfig a starting broker builds from a topic's overrides
     * (LogConfig.fromProps(brokerDefaults, overrides), every line): ConfigDef.parse with each key's
     * validator, then the constructor's own conversions (message.format.version through
     * ApiVersion/MetadataVersion, the timestamp type, ...). Throws what the broker would throw.
     */
    static void construct(Properties overrides) throws Throwable {
        for (Method m : logConfigClass().getMethods()) {
            if (m.getName().equals("fromProps") && Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 2
                    && Map.class.isAssignableFrom(m.getParameterTypes()[0])
                    && m.getParameterTypes()[1] == Properties.class) {
                try {
                    m.invoke(null, new java.util.HashMap<String, Object>(), overrides);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                return;
            }
        }
        throw new IllegalStateException("no static fromProps(Map, Properties) in " + logConfigClass().getName());
    }

    static boolean constructs(String name, String value) {
        Properties props = new Properties();
        props.put(name, value);
        try {
            construct(props);
            return true;
        } catch (Throwable refused) {
            return false;
        }
    }

    // ------------------------------------------------------------------ dump

    static String dump(String release) throws Exception {
        ConfigDef def = configDef();
        StringBuilder out = new StringBuilder();
        out.append("{\"release\": ").append(json(release))
           .append(", \"class\": ").append(json(logConfigClass().getName()))
           .append(", \"configs\": {");
        boolean first = true;
        for (Map.Entry<String, ConfigDef.ConfigKey> e : def.configKeys().entrySet()) {
            ConfigDef.ConfigKey key = e.getValue();
            out.append(first ? "\n" : ",\n");
            first = false;
            out.append(json(e.getKey())).append(": {\"type\": ")
               .append(json(key.type.name().toLowerCase()))
               .append(", \"default\": ").append(defaultText(key.defaultValue))
               .append(", \"validator\": ").append(validator(key.name, key.validator))
               .append("}");
        }
        out.append("\n}}");
        return out.toString();
    }

    static String defaultText(Object value) {
        if (value == null || value == ConfigDef.NO_DEFAULT_VALUE) {
            return "null";
        }
        if (value instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object o : (List<?>) value) {
                parts.add(String.valueOf(o));
            }
            return json(String.join(",", parts));
        }
        if (value instanceof Class) {
            return json(((Class<?>) value).getName());
        }
        return json(String.valueOf(value));
    }

    static String validator(String name, ConfigDef.Validator v) throws Exception {
        if (name.equals("message.format.version")) {  // checked by a validator or by the constructor
            return "{\"kind\": \"versions\", \"values\": " + strings(acceptedVersions(name)) + "}";
        }
        if (v == null && name.equals("message.timestamp.type")) {  // 0.10.x: TimestampType.forName in the constructor
            List<String> accepted = new ArrayList<>();
            for (String candidate : new String[] {"CreateTime", "LogAppendTime"}) {
                if (constructs(name, candidate)) {
                    accepted.add(candidate);
                }
            }
            return "{\"kind\": \"choices\", \"values\": " + strings(accepted) + "}";
        }
        if (v == null) {
            return "{\"kind\": \"none\"}";
        }
        String cls = v.getClass().getName();
        if (v instanceof ConfigDef.Range) {
            return "{\"kind\": \"range\", \"min\": " + number(field(v, "min")) + ", \"max\": " + number(field(v, "max")) + "}";
        }
        if (v instanceof ConfigDef.ValidString) {
            return "{\"kind\": \"choices\", \"values\": " + strings((Collection<?>) field(v, "validStrings")) + "}";
        }
        if (cls.endsWith("$ValidList")) {
            Object inner = field(v, "validString");
            return "{\"kind\": \"list-choices\", \"values\": " + strings((Collection<?>) field(inner, "validStrings")) + "}";
        }
        if (cls.endsWith("ThrottledReplicaListValidator") || cls.endsWith("ThrottledReplicaListValidator$")) {
            return "{\"kind\": \"throttled-replicas\"}";
        }
        if (name.equals("compression.gzip.level")) {  // [1,...,9] or -1: GzipCompression.LevelValidator (3.9), an anonymous class in 3.8
            return "{\"kind\": \"gzip-level\"}";
        }
        return "{\"kind\": \"other\", \"class\": " + json(cls) + ", \"text\": " + json(String.valueOf(v)) + "}";
    }

    static List<String> acceptedVersions(String name) {
        String[] releases = {"0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
            "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
            "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1"};
        List<String> accepted = new ArrayList<>();
        for (String release : releases) {
            List<String> candidates = new ArrayList<>();
            candidates.add(release);
            for (int i = 0; i < 10; i++) {
                candidates.add(release + "-IV" + i);
            }
            for (String candidate : candidates) {
                if (constructs(name, candidate)) {
                    accepted.add(candidate);
                }
            }
        }
        return accepted;
    }

    static Object field(Object target, String name) throws Exception {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(target);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(name + " in " + target.getClass().getName());
    }

    static String number(Object n) {
        if (n == null) {
            return "null";
        }
        if (n instanceof Double || n instanceof Float) {
            double d = ((Number) n).doubleValue();
            return d == Math.rint(d) && !Double.isInfinite(d) ? String.valueOf((long) d) + ".0" : String.valueOf(d);
        }
        return String.valueOf(n);
    }

    static String strings(Collection<?> values) {
        StringBuilder out = new StringBuilder("[");
        boolean first = true;
        for (Object o : values) {
            out.append(first ? "" : ", ").append(json(String.valueOf(o)));
            first = false;
        }
        return out.append("]").toString();
    }

    // ------------------------------------------------------------------ probe

    static void probe(String file) throws Exception {
        Method validate = validateMethod();
        try (BufferedReader in = new BufferedReader(new FileReader(file, java.nio.charset.StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) {
                    continue;
                }
                List<String> strings = parseStrings(line);
                Properties props = new Properties();
                for (int i = 0; i + 1 < strings.size(); i += 2) {
                    props.put(strings.get(i), strings.get(i + 1));
                }
                String startupError = null;
                try {
                    construct(props);
                } catch (Throwable e) {
                    startupError = e.getClass().getSimpleName() + ": " + e.getMessage();
                }
                String validateError = null;
                try {
                    validate.invoke(null, props);
                } catch (InvocationTargetException e) {
                    Throwable cause = e.getCause();
                    validateError = cause.getClass().getSimpleName() + ": " + cause.getMessage();
                }
                System.out.println("{\"accepted_startup\": " + (startupError == null)
                    + ", \"accepted_validate\": " + (validateError == null)
                    + ", \"error\": " + json(startupError != null ? startupError : validateError) + "}");
            }
        }
    }

    static Method validateMethod() throws Exception {
        for (Method m : logConfigClass().getMethods()) {
            if (m.getName().equals("validate") && Modifier.isStatic(m.getModifiers())
                    && m.getParameterCount() == 1 && m.getParameterTypes()[0] == Properties.class) {
                return m;
            }
        }
        throw new IllegalStateException("no static validate(Properties) in " + logConfigClass().getName());
    }

    // ------------------------------------------------------------------ tiny JSON

    static String json(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }

    /** Parses ["key", "value", ...] as written by Python's json.dumps (ASCII, standard escapes). */
    static List<String> parseStrings(String line) {
        List<String> values = new ArrayList<>();
        int i = line.indexOf('"');
        while (i >= 0) {
            StringBuilder s = new StringBuilder();
            i++;
            while (line.charAt(i) != '"') {
                char c = line.charAt(i);
                if (c == '\\') {
                    char e = line.charAt(++i);
                    switch (e) {
                        case 'n': s.append('\n'); break;
                        case 'r': s.append('\r'); break;
                        case 't': s.append('\t'); break;
                        case 'b': s.append('\b'); break;
                        case 'f': s.append('\f'); break;
                        case 'u': s.append((char) Integer.parseInt(line.substring(i + 1, i + 5), 16)); i += 4; break;
                        default: s.append(e);
                    }
                } else {
                    s.append(c);
                }
                i++;
            }
            values.add(s.toString());
            i = line.indexOf('"', i + 1);
        }
        return values;
    }
}
