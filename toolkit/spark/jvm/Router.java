package toolkit.spark.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExpressionSet;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.CollectionAccumulator;
import scala.Option;
import scala.collection.Seq;
import scala.collection.immutable.Nil$;

/**
 * The router of toolkit/core/batch/routing.py (RULES 3.1) over JSON lines, inside the JVM.
 *
 * <p>Which column receives which value is not decided here: Python sends a routing table
 * (toolkit/spark/router.py) made by the core Router's own {@code rule()}: per column, per
 * kind code of Tally.java seen in the batch, how the value is written (converted, routed as
 * records, or an array without typed leaves) and how many list levels wrap it. What runs
 * here is the mechanical part: reading each line with the tally's tokenizer, converting
 * leaves by the conversion table of RULES 2 (toolkit/core/values/conversions.py, value by value,
 * null where a conversion is inexact), and building Spark's internal rows.
 *
 * <p>Anything the table does not foresee (a line the tally would not read, a kind code the
 * batch's tally did not see) fails the task with a message: the pipeline then routes the
 * batch with the Python router. Nothing is ever written by a guess. When it tallies as it
 * routes ({@link #routeTallied}), a line it cannot read (bytes that are not UTF-8, not a
 * JSON object, malformed, a key twice) is set aside instead, with its file and line number:
 * no row, and its bytes in the task's payload, for Python to read again and quarantine (or,
 * where Python reads it after all, to route the batch again the two-pass way).
 *
 * <p>{@link #routeTallied} also tallies each line it routes, so a batch that fits its
 * table's schema is read once: the pipeline plans on that tally after the write, and
 * publishes the write only when the plan changes nothing (toolkit/spark/batches.py).
 */
public final class Router {
  // how a value lands in a column (routing.Rule), NONE: it does not
  static final int NONE = -1;
  static final int CONVERT = 0;
  static final int RECORDS = 1;
  static final int EMPTY = 2;

  // the lattice type of a column's leaves
  static final int T_NONE = -1;
  static final int T_BOOLEAN = 0;
  static final int T_LONG = 1;
  static final int T_DOUBLE = 2;
  static final int T_STRING = 3;
  static final int T_DATE = 4;
  static final int T_TIMESTAMP = 5;
  static final int T_RECORD = 6;

  static final long MICROS_PER_DAY = 86_400_000_000L;
  static final long MIN_MICROS = Tally.PartitionTally.MIN_SECOND * 1_000_000L;
  static final long END_MICROS = Tally.PartitionTally.END_SECOND * 1_000_000L;

  private Router() {}

  /**
   * The routed rows of {@code lines} (one string column of JSON lines) as a DataFrame of
   * {@code schema} (the Spark schema of the table the plan made).
   *
   * @param table the routing table, as JSON (see toolkit/spark/router.py)
   * @param longTimestampUnit the unit of longs written into timestamp columns: auto, s, ms,
   *     us or ns
   */
  public static Dataset<Row> route(
      Dataset<Row> lines,
      String table,
      String schema,
      boolean detectDates,
      String timestampUnit,
      String longTimestampUnit) {
    return Dataset.ofRows(
        lines.sparkSession(),
        routeTallied(lines, table, schema, detectDates, timestampUnit, longTimestampUnit, null));
  }

  /**
   * {@link #route}, tallying every line it routes as {@link Tally#observe} does: each task
   * adds its partition's payload to {@code payloads} once it has routed its last line (the
   * one-pass ingest: toolkit/spark/batches.py). A task may run more than once (a retry, or
   * the sampling job of a sorted write): every run of a partition adds the same payload, so
   * the driver keeps one per partition. Lines the tally would hand to the Python path
   * are set aside in the payload (see the class comment), never failing the task.
   *
   * <p>The routed rows come as a plan not analysed yet (what {@code
   * internalCreateDataFrame} makes before it analyses it): the write that takes them
   * analyses them in its own session, once (Plans.append).
   */
  @SuppressWarnings("unchecked")
  public static LogicalPlan routeTallied(
      Dataset<Row> lines,
      String table,
      String schema,
      boolean detectDates,
      String timestampUnit,
      String longTimestampUnit,
      CollectionAccumulator<String> payloads) {
    StructType type = (StructType) DataType.fromJson(schema);
    Table.parse(table); // refused now rather than in every task
    RouteFn fn = new RouteFn(table, detectDates, timestampUnit, longTimestampUnit, payloads);
    JavaRDD<InternalRow> rows = lines.queryExecution().toRdd().toJavaRDD().mapPartitions(fn);
    Seq<Attribute> output = (Seq<Attribute>) (Seq<?>) DataTypeUtils.toAttributes(type);
    Seq<SortOrder> unordered = (Seq<SortOrder>) (Seq<?>) Nil$.MODULE$;
    return new LogicalRDD(
        output,
        rows.rdd(),
        new UnknownPartitioning(0),
        unordered,
        false,
        lines.sparkSession(),
        Option.<Statistics>empty(),
        Option.<ExpressionSet>empty());
  }

  /**
   * The payloads {@link #routeTallied} gathered, one per line (JSON text holds no raw line
   * break): the driver reads them in one round trip.
   */
  public static String payloadLines(CollectionAccumulator<String> payloads) {
    return String.join("\n", payloads.value());
  }

  /** How many partitions the routed rows of {@code lines} come in (one payload each). */
  public static int partitions(Dataset<Row> lines) {
    return lines.queryExecution().toRdd().getNumPartitions();
  }

  /** Python's repr of a double (shortest round-trip digits, its own layout), for tests. */
  public static String reprOf(double d) {
    return pyRepr(d);
  }

  // ------------------------------------------------------------------ the table

  static final class Column {
    int target;
    /** rules of scalar kind codes, by code; of array codes in {@link #arrays} */
    final int[][] scalars = new int[Tally.SCALARS][];
    final HashMap<Integer, int[]> arrays = new HashMap<>();
    Table struct;

    int[] rule(int code) {
      return code < Tally.SCALARS ? scalars[code] : arrays.get(code);
    }
  }

  static final class Table {
    Column[] columns;
    /** per column, the last record (serial) that had its key: a key twice is refused */
    long[] seenIn;
    /** a key's columns, by index */
    final HashMap<String, int[]> byFamily = new HashMap<>();

    static Table parse(String json) {
      try {
        return of(new ObjectMapper().readTree(json));
      } catch (IOException e) {
        throw new IllegalArgumentException("a routing table that is not JSON: " + e, e);
      }
    }

    static Table of(JsonNode node) {
      Table t = new Table();
      JsonNode cols = node.get("columns");
      t.columns = new Column[cols.size()];
      t.seenIn = new long[cols.size()];
      HashMap<String, int[]> families = t.byFamily;
      for (int i = 0; i < cols.size(); i++) {
        JsonNode c = cols.get(i);
        Column col = new Column();
        col.target = target(c.get("target").isNull() ? null : c.get("target").asText());
        for (JsonNode r : c.get("rules")) {
          int code = r.get(0).asInt();
          int[] rule = {r.get(1).asInt(), r.get(2).asInt(), r.get(3).asInt()};
          if (code < Tally.SCALARS) col.scalars[code] = rule;
          else col.arrays.put(code, rule);
        }
        if (!c.get("struct").isNull()) col.struct = of(c.get("struct"));
        t.columns[i] = col;
        String family = c.get("family").asText();
        int[] before = families.get(family);
        int[] now = before == null ? new int[1] : Arrays.copyOf(before, before.length + 1);
        now[now.length - 1] = i;
        families.put(family, now);
      }
      return t;
    }

    static int target(String name) {
      if (name == null) return T_NONE;
      switch (name) {
        case "boolean":
          return T_BOOLEAN;
        case "long":
          return T_LONG;
        case "double":
          return T_DOUBLE;
        case "string":
          return T_STRING;
        case "date":
          return T_DATE;
        case "timestamp":
          return T_TIMESTAMP;
        case "record":
          return T_RECORD;
        default:
          throw new IllegalArgumentException("no lattice type " + name);
      }
    }
  }

  // ------------------------------------------------------------------ the tasks

  static final class RouteFn
      implements FlatMapFunction<Iterator<InternalRow>, InternalRow>, Serializable {
    private static final long serialVersionUID = 1L;
    final String table;
    final boolean detectDates;
    final String timestampUnit;
    final String longTimestampUnit;
    /** where each task's tally payload goes; null: no tally */
    final CollectionAccumulator<String> payloads;

    RouteFn(
        String table,
        boolean detectDates,
        String timestampUnit,
        String longTimestampUnit,
        CollectionAccumulator<String> payloads) {
      this.table = table;
      this.detectDates = detectDates;
      this.timestampUnit = timestampUnit;
      this.longTimestampUnit = longTimestampUnit;
      this.payloads = payloads;
    }

    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> lines) {
      return new Lines(lines, new Routing(this), payloads);
    }
  }

  /** The routed row of each line that is a record; blank lines are skipped. */
  static final class Lines implements Iterator<InternalRow> {
    final Iterator<InternalRow> in;
    final Routing routing;
    final CollectionAccumulator<String> payloads;
    InternalRow next;

    Lines(Iterator<InternalRow> in, Routing routing, CollectionAccumulator<String> payloads) {
      this.in = in;
      this.routing = routing;
      this.payloads = payloads;
      routing.tallying = payloads != null;
    }

    @Override
    public boolean hasNext() {
      while (next == null && in.hasNext()) {
        InternalRow row = in.next();
        if (row.isNullAt(0)) continue;
        next = routing.line(row.getUTF8String(0));
      }
      if (next == null && routing.tallying) { // the last line is routed: the tally is whole
        routing.tallying = false;
        payloads.add(routing.tape.payload(TaskContext.getPartitionId(), null));
      }
      return next != null;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) throw new NoSuchElementException();
      InternalRow out = next;
      next = null;
      return out;
    }
  }

  /** What one task routes with: the tokenizer's tape, the table, the units. */
  static final class Routing {
    final Tally.PartitionTally tape;
    final Table table;
    /** whether each routed line is tallied too, until the partition's payload is sent */
    boolean tallying;
    final int per;
    /** microseconds per unit of longs into timestamps; 0: auto; -1: ns */
    final long longUnit;

    Routing(RouteFn fn) {
      int micros = Tally.microsPer(fn.timestampUnit);
      tape = new Tally.PartitionTally(fn.detectDates, micros);
      tape.keep = true;
      table = Table.parse(fn.table);
      per = micros;
      switch (fn.longTimestampUnit) {
        case "auto":
          longUnit = 0;
          break;
        case "ns":
          longUnit = -1;
          break;
        default:
          longUnit = Tally.microsPer(fn.longTimestampUnit);
      }
    }

    /** the file of the last line read (InputFileBlockHolder's), and its line number there */
    UTF8String file;
    long number;
    /** whether the lines of {@link #file} are numbered from its start (its split starts it) */
    boolean numbered;

    /** Counts a line of the current input file: lines are numbered as Python numbers them. */
    void count() {
      UTF8String now = InputFileBlockHolder.getInputFilePath();
      if (now != file && (file == null || !file.equals(now))) {
        file = now;
        number = 0;
        numbered = InputFileBlockHolder.getStartOffset() == 0;
      }
      number++;
    }

    /** The routed row of one line; null for a blank one, or one set aside. */
    InternalRow line(UTF8String s) {
      Object base = s.getBaseObject();
      byte[] b;
      int off;
      if (base instanceof byte[]) {
        b = (byte[]) base;
        off = (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET);
      } else {
        b = s.getBytes();
        off = 0;
      }
      if (tallying) count();
      String reason = tape.read(b, off, s.numBytes());
      if (reason == Tally.PartitionTally.BLANK) return null;
      if (reason != null) {
        if (tallying) { // set aside, in this same pass: Python reads it again and decides
          String name = file == null || file.numBytes() == 0 ? null : file.toString();
          tape.setAside(b, off, s.numBytes(), name, numbered && name != null ? number : -1, reason);
          return null;
        }
        String text = new String(b, off, Math.min(s.numBytes(), 200), StandardCharsets.UTF_8);
        throw new IllegalStateException("toolkit router: " + reason + " in line " + text);
      }
      if (tallying) {
        reason = tape.tallyRead();
        // (a guard: read() refuses what tallyRead() would find) the partition's tally is
        // not sent, so the driver routes the batch again the two-pass way
        if (reason != null && tape.spoiled == null) tape.spoiled = reason;
      }
      return struct(0, table);
    }

    // ---------------------------------------------------------------- the walk

    /** The row a record (tape entry i) makes in a struct of {@code t}. */
    GenericInternalRow struct(int i, Table t) {
      Tally.PartitionTally p = tape;
      Object[] values = new Object[t.columns.length];
      long serial = ++records;
      int stop = p.aux[i];
      int j = i + 1;
      while (j < stop) {
        int v = j + 1;
        int[] cols = t.byFamily.get(p.names[j]);
        if (cols != null) {
          if (t.seenIn[cols[0]] == serial) { // read() refuses a key twice: a guard
            throw new IllegalStateException("toolkit router: a duplicate key " + p.names[j]);
          }
          t.seenIn[cols[0]] = serial;
          int code = code(v);
          if (code >= 0) {
            for (int c : cols) values[c] = value(v, code, t.columns[c]);
          }
        }
        j = p.type[v] == Tally.PartitionTally.SCALAR ? v + 1 : p.aux[v];
      }
      return new GenericInternalRow(values);
    }

    /** a serial number per record routed */
    long records;

    /** The kind code of the value at tape entry v; -1 for null. */
    int code(int v) {
      Tally.PartitionTally p = tape;
      byte t = p.type[v];
      if (t == Tally.PartitionTally.SCALAR) return p.aux[v];
      if (t == Tally.PartitionTally.OBJ) return Tally.RECORD;
      return p.arrayCode(v);
    }

    Object value(int v, int code, Column col) {
      int[] rule = col.rule(code);
      if (rule == null) { // the table lists every code the batch's tally saw for this key
        // tallied as it routes: the driver sees the code in the tally, drops this write and
        // routes the batch again with a table made for it
        if (tallying) return null;
        throw new IllegalStateException(
            "toolkit router: kind code " + code + " is not in the routing table");
      }
      switch (rule[0]) {
        case NONE:
          return null;
        case CONVERT:
          if (tape.type[v] == Tally.PartitionTally.SCALAR) {
            Object out = convert(v, code, col.target);
            return out == LOSSY ? null : wrap(out, rule[2]);
          }
          int target = col.target;
          try {
            return wrap(normalize(v, rule[1], j -> converted(j, target)), rule[2]);
          } catch (Inexact e) {
            return null;
          }
        case RECORDS:
          Table struct = col.struct;
          if (tape.type[v] == Tally.PartitionTally.OBJ) return wrap(struct(v, struct), rule[2]);
          return wrap(normalize(v, rule[1], j -> routed(j, struct)), rule[2]);
        case EMPTY:
          return wrap(normalize(v, rule[1], j -> routed(j, null)), rule[2]);
        default:
          throw new IllegalStateException("toolkit router: no way " + rule[0]);
      }
    }

    /** What becomes of each leaf (a tape entry that is no array) in {@link #normalize}. */
    interface Leaf {
      Object at(int j);
    }

    /**
     * routing.normalize: the array at tape entry i at exactly {@code depth} levels (RULES 1:
     * shallower leaves are wrapped), null elements kept, each leaf as {@code leaf} makes it.
     */
    GenericArrayData normalize(int i, int depth, Leaf leaf) {
      Tally.PartitionTally p = tape;
      int stop = p.aux[i];
      Object[] out = new Object[count(i)];
      int k = 0;
      int j = i + 1;
      while (j < stop) {
        byte t = p.type[j];
        if (t == Tally.PartitionTally.ARR) {
          out[k++] = normalize(j, depth - 1, leaf);
          j = p.aux[j];
        } else if (t == Tally.PartitionTally.SCALAR && p.aux[j] < 0) {
          out[k++] = null;
          j++;
        } else {
          out[k++] = wrap(leaf.at(j), depth - 1);
          j = t == Tally.PartitionTally.SCALAR ? j + 1 : p.aux[j];
        }
      }
      return new GenericArrayData(out);
    }

    /**
     * A leaf converted into {@code target}; a leaf that cannot be is Inexact. A record leaf
     * (of an array mixing records and primitives) is null: its record column holds it.
     */
    Object converted(int j, int target) {
      if (tape.type[j] == Tally.PartitionTally.OBJ) return null;
      Object leaf = convert(j, tape.aux[j], target);
      if (leaf == LOSSY) throw Inexact.INSTANCE;
      return leaf;
    }

    /**
     * A record leaf routed into {@code t}; a primitive leaf (of an array mixing records and
     * primitives) is null: its primitive column holds it.
     */
    Object routed(int j, Table t) {
      if (t == null) {
        throw new IllegalStateException("toolkit router: an unexpected leaf in an array");
      }
      return tape.type[j] == Tally.PartitionTally.OBJ ? struct(j, t) : null;
    }

    /** The elements of the array at tape entry i. */
    int count(int i) {
      Tally.PartitionTally p = tape;
      int stop = p.aux[i];
      int n = 0;
      int j = i + 1;
      while (j < stop) {
        n++;
        j = p.type[j] == Tally.PartitionTally.SCALAR ? j + 1 : p.aux[j];
      }
      return n;
    }

    // ---------------------------------------------------------------- RULES 2

    /**
     * The scalar at tape entry j (kind code {@code code}) in a column of {@code target}, as
     * Spark holds it inside; LOSSY where conversions.Conversions.convert gives LOSSY.
     */
    Object convert(int j, int code, int target) {
      Tally.PartitionTally p = tape;
      long v = p.lv[j];
      String text = p.sv[j];
      switch (target) {
        case T_STRING:
          // a text keeps its own spelling (the tokenizer refused lone surrogates)
          if (text != null) return UTF8String.fromString(text);
          if (p.aux2[j] >= 0) {
            // a JSON text without escapes: its bytes are its UTF-8 (copied: the line's
            // buffer is reused)
            int from = p.start[j] + 1;
            return UTF8String.fromBytes(Arrays.copyOfRange(p.buf, from, from + p.aux2[j]));
          }
          switch (code) {
            case Tally.BOOLEAN:
              return UTF8String.fromString(v != 0 ? "true" : "false");
            case Tally.LONG:
            case Tally.LONG_LOSSY:
              return UTF8String.fromString(Long.toString(v));
            case Tally.DOUBLE:
              return UTF8String.fromString(pyRepr(Double.longBitsToDouble(v)));
            default:
              return LOSSY;
          }
        case T_LONG:
          switch (code) {
            case Tally.BOOLEAN:
            case Tally.LONG:
            case Tally.LONG_LOSSY:
              return v;
            case Tally.DATE:
              return (v * MICROS_PER_DAY) / per; // whole days are whole units
            case Tally.TIMESTAMP:
            case Tally.TIMESTAMP_FRACTION:
            case Tally.TIMESTAMP_FAR:
              return Math.floorMod(v, (long) per) == 0 ? (Object) Math.floorDiv(v, (long) per) : LOSSY;
            default:
              return LOSSY;
          }
        case T_DOUBLE:
          switch (code) {
            case Tally.BOOLEAN:
              return v != 0 ? 1.0 : 0.0;
            case Tally.LONG:
            case Tally.LONG_LOSSY:
              return longToDouble(v);
            case Tally.DOUBLE:
              return Double.longBitsToDouble(v);
            case Tally.DATE:
              return longToDouble((v * MICROS_PER_DAY) / per);
            case Tally.TIMESTAMP:
            case Tally.TIMESTAMP_FRACTION:
            case Tally.TIMESTAMP_FAR:
              if (Math.floorMod(v, (long) per) != 0) return LOSSY;
              return longToDouble(Math.floorDiv(v, (long) per));
            default:
              return LOSSY;
          }
        case T_TIMESTAMP:
          switch (code) {
            case Tally.LONG:
            case Tally.LONG_LOSSY:
              return longToTimestamp(v);
            case Tally.DATE:
              return v * MICROS_PER_DAY;
            case Tally.TIMESTAMP:
            case Tally.TIMESTAMP_FRACTION:
            case Tally.TIMESTAMP_FAR:
              return v;
            default:
              return LOSSY;
          }
        case T_DATE:
          return code == Tally.DATE ? (Object) (int) v : LOSSY;
        case T_BOOLEAN:
          return code == Tally.BOOLEAN ? (Object) (v != 0) : LOSSY;
        default:
          return LOSSY;
      }
    }

    /** conversions.long_to_double: LOSSY where the double would round the long. */
    static Object longToDouble(long v) {
      double d = (double) v;
      return d == 0x1p63 || (long) d != v ? LOSSY : (Object) d;
    }

    /** Conversions.long_to_timestamp: the unit read from the magnitude unless fixed. */
    Object longToTimestamp(long v) {
      long unit = longUnit;
      if (unit == 0) {
        if (v > -100_000_000_000L && v < 100_000_000_000L) unit = 1_000_000; // s
        else if (v > -100_000_000_000_000L && v < 100_000_000_000_000L) unit = 1_000; // ms
        else if (v > -100_000_000_000_000_000L && v < 100_000_000_000_000_000L) unit = 1; // us
        else unit = -1; // ns
      }
      long micros;
      if (unit == -1) {
        if (Math.floorMod(v, 1000L) != 0) return LOSSY;
        micros = Math.floorDiv(v, 1000L);
      } else {
        try {
          micros = Math.multiplyExact(v, unit);
        } catch (ArithmeticException e) {
          return LOSSY;
        }
      }
      return micros < MIN_MICROS || micros >= END_MICROS ? LOSSY : (Object) micros;
    }
  }

  static Object wrap(Object value, int times) {
    for (int i = 0; i < times; i++) value = new GenericArrayData(new Object[] {value});
    return value;
  }

  /** Marks a conversion that would change the value (conversions.LOSSY). */
  static final Object LOSSY = new Object();

  /** A leaf that cannot be written exactly: the whole array stays null (routing._Skip). */
  static final class Inexact extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Inexact INSTANCE = new Inexact();

    private Inexact() {
      super(null, null, false, false);
    }
  }

  // ------------------------------------------------------------------ Python's repr

  /**
   * conversions.render_double: Python's repr of a double. Its digits are the shortest that
   * read back as the same double and, among those, the closest to it (David Gay's mode 0);
   * Java 17's Double.toString is sometimes longer. Its layout: positional when the decimal
   * exponent is in [-4, 16), else {@code 1.5e-05} / {@code 1e+16}.
   */
  static String pyRepr(double d) {
    if (Double.isNaN(d)) return "NaN";
    if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
    if (d == 0) return 1 / d < 0 ? "-0.0" : "0.0";
    BigDecimal best = shortest(Math.abs(d));
    String digits = best.unscaledValue().toString();
    int n = digits.length();
    int decpt = n - best.scale(); // a = 0.digits * 10**decpt
    StringBuilder out = new StringBuilder(24);
    if (d < 0) out.append('-');
    if (decpt > -4 && decpt <= 16) {
      if (decpt <= 0) {
        out.append("0.");
        for (int i = 0; i < -decpt; i++) out.append('0');
        out.append(digits);
      } else if (decpt < n) {
        out.append(digits, 0, decpt).append('.').append(digits, decpt, n);
      } else {
        out.append(digits);
        for (int i = n; i < decpt; i++) out.append('0');
        out.append(".0");
      }
      return out.toString();
    }
    out.append(digits.charAt(0));
    if (n > 1) out.append('.').append(digits, 1, n);
    int exp = decpt - 1;
    out.append(exp < 0 ? "e-" : "e+");
    int e = Math.abs(exp);
    if (e < 10) out.append('0');
    out.append(e);
    return out.toString();
  }

  /**
   * The digits of Python's repr of a positive finite double {@code a}: the shortest decimal
   * that reads back as a, the closest to it among those (trailing zeros stripped).
   */
  static BigDecimal shortest(double a) {
    BigDecimal exact = new BigDecimal(a);
    // some p-digit decimal reads back as a => so does some (p+1)-digit one: bisect on p
    int lo = 1;
    int hi = 17;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (nearest(exact, a, mid) != null) hi = mid;
      else lo = mid + 1;
    }
    return nearest(exact, a, lo).stripTrailingZeros();
  }

  /** The p-digit decimal closest to {@code exact} that reads back as a; null if none does. */
  private static BigDecimal nearest(BigDecimal exact, double a, int p) {
    BigDecimal down = exact.round(new MathContext(p, RoundingMode.FLOOR));
    BigDecimal up = exact.round(new MathContext(p, RoundingMode.CEILING));
    boolean downOk = down.doubleValue() == a;
    boolean upOk = up.doubleValue() == a;
    if (downOk && upOk) {
      int c = exact.subtract(down).compareTo(up.subtract(exact));
      if (c != 0) return c < 0 ? down : up;
      return down.unscaledValue().testBit(0) ? up : down; // a tie: the even one
    }
    return downOk ? down : upOk ? up : null;
  }
}
