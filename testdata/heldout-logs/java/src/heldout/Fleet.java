package heldout;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The event script and the fleet, read without a JSON library (the lines are flat objects). */
final class Fleet {
    static final class Event {
        final Map<String, Object> f;

        Event(Map<String, Object> f) {
            this.f = f;
        }

        String s(String k) {
            Object v = f.get(k);
            return v == null ? "" : v.toString();
        }

        long n(String k) {
            Object v = f.get(k);
            return v == null ? 0 : ((Number) v).longValue();
        }

        boolean b(String k) {
            return Boolean.TRUE.equals(f.get(k));
        }

        Instant time() {
            return Instant.parse(s("t"));
        }

        String step() {
            return s("step");
        }

        String order() {
            return s("order");
        }

        String instance() {
            return s("instance");
        }

        int thread() {
            return (int) n("thread");
        }

        String amount() {
            long c = n("amount");
            return String.format("%d.%02d", c / 100, c % 100);
        }
    }

    static final class Instance {
        String id, pod, host, compose;
        List<Long> pids = new ArrayList<>();
    }

    final List<Event> events = new ArrayList<>();
    final Map<String, Instance> instances = new LinkedHashMap<>();

    static Fleet load(Path dir) throws IOException {
        Fleet fl = new Fleet();
        try (BufferedReader r = Files.newBufferedReader(dir.resolve("events.jsonl"), StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null; ) {
                fl.events.add(new Event(parseFlat(line)));
            }
        }
        // fleet-truth.json: read the instances array's objects (flat but for "pids", "starts")
        String t = Files.readString(dir.resolve("fleet-truth.json"));
        int at = t.indexOf("\"instances\"");
        int end = t.indexOf("\"orders\"");
        String part = t.substring(at, end);
        for (int i = part.indexOf("\"id\""); i >= 0; i = part.indexOf("\"id\"", i + 1)) {
            Instance in = new Instance();
            in.id = str(part, "\"id\"", i);
            in.pod = str(part, "\"pod\"", i);
            in.host = str(part, "\"host\"", i);
            in.compose = str(part, "\"compose\"", i);
            int p = part.indexOf("\"pids\"", i);
            String arr = part.substring(part.indexOf('[', p) + 1, part.indexOf(']', p));
            for (String x : arr.split(",")) {
                in.pids.add(Long.parseLong(x.trim()));
            }
            fl.instances.put(in.id, in);
        }
        return fl;
    }

    private static String str(String s, String key, int from) {
        int k = s.indexOf(key, from);
        int q1 = s.indexOf('"', s.indexOf(':', k) + 1);
        return s.substring(q1 + 1, s.indexOf('"', q1 + 1));
    }

    static Map<String, Object> parseFlat(String line) {
        Map<String, Object> m = new HashMap<>();
        int i = line.indexOf('{') + 1;
        while (i < line.length()) {
            int k1 = line.indexOf('"', i);
            if (k1 < 0) {
                break;
            }
            int k2 = line.indexOf('"', k1 + 1);
            String key = line.substring(k1 + 1, k2);
            int v = line.indexOf(':', k2) + 1;
            if (line.charAt(v) == '"') {
                StringBuilder sb = new StringBuilder();
                int j = v + 1;
                for (; line.charAt(j) != '"'; j++) {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        j++;
                        c = line.charAt(j);
                    }
                    sb.append(c);
                }
                m.put(key, sb.toString());
                i = j + 1;
            } else {
                int j = v;
                while (j < line.length() && line.charAt(j) != ',' && line.charAt(j) != '}') {
                    j++;
                }
                String raw = line.substring(v, j);
                if (raw.equals("true") || raw.equals("false")) {
                    m.put(key, Boolean.parseBoolean(raw));
                } else {
                    m.put(key, Long.parseLong(raw));
                }
                i = j;
            }
        }
        return m;
    }
}
