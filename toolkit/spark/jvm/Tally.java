package toolkit.spark.jvm;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.JsonTokenId;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.base.ParserBase;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;
import java.io.Serializable;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The type tally of toolkit/core/batch/observe.py (RULES 1) over JSON lines, inside the JVM.
 *
 * <p>Each partition walks its lines with Jackson and sends back, as JSON, the tree of its
 * Summary (per key the count of each kind code, nested records per exact dimension) and
 * the first samples per field path and kind code. Python (toolkit/spark/tally.py) turns kind
 * codes into Kinds with the core Classifier itself, so the lattice and the per-value
 * exactness rules stay in one place. A kind code is either a scalar class below (values the
 * Classifier types alike) or, for an array, {@code depth << 10 | mask of leaf classes}.
 *
 * <p>A line the Python path might read differently (not an object, malformed, duplicate
 * keys, NaN spelled otherwise than Python spells it, ...) stops the partition: its payload
 * says "fallback" and Python observes that partition with the Python path, which raises the
 * same error it always raises (or reads the line, where Jackson was stricter). The router
 * (Router.java), which tallies as it routes, sets such a line aside instead (see {@link
 * PartitionTally#setAside}): its bytes travel in the payload, and Python decides.
 *
 * <p>A number beyond the double range (1e400, which a double reads as infinity) or a
 * nonzero one below it (1e-400, read as 0.0) is a text of its literal, as in Python
 * (toolkit/core/values/jsonlines.py; RULES 1, as integers beyond 64 bits are).
 */
public final class Tally {
  static final int BOOLEAN = 0;
  static final int LONG = 1;
  /** a long beyond 2**53 that a double would round */
  static final int LONG_LOSSY = 2;
  static final int DOUBLE = 3;
  static final int STRING = 4;
  static final int DATE = 5;
  /** a whole number of the epoch unit: converts exactly to long */
  static final int TIMESTAMP = 6;
  /** a fraction of the epoch unit (or microseconds a double holds exactly) */
  static final int TIMESTAMP_FRACTION = 7;
  /** microseconds (unit "us") beyond what a double holds exactly */
  static final int TIMESTAMP_FAR = 8;
  static final int RECORD = 9;
  static final int SCALARS = 10;
  static final int ARRAY_SHIFT = 10;
  static final int SAMPLES = 3;
  static final long DOUBLE_EXACT = 1L << 53;
  /** deeper lines are left to the Python path (see tokenize) */
  static final int MAX_DEPTH = 100;

  private Tally() {}

  /**
   * One JSON payload per partition of {@code df} (one string column of JSON lines).
   *
   * @param timestampUnit the epoch unit of timestamps in long columns: s, ms or us
   */
  public static String[] observe(Dataset<Row> df, boolean detectDates, String timestampUnit) {
    Observer fn = new Observer(detectDates, microsPer(timestampUnit));
    List<String> out =
        df.queryExecution().toRdd().toJavaRDD().mapPartitionsWithIndex(fn, false).collect();
    return out.toArray(new String[0]);
  }

  /** The payload of a list of lines, without Spark (for checks from a driver). */
  public static String observeLines(String[] lines, boolean detectDates, String timestampUnit) {
    PartitionTally t = new PartitionTally(detectDates, microsPer(timestampUnit));
    String reason = null;
    for (String line : lines) {
      if (line == null) continue;
      byte[] b = line.getBytes(StandardCharsets.UTF_8);
      reason = t.line(b, 0, b.length);
      if (reason != null) break;
    }
    return t.payload(0, reason);
  }

  static int microsPer(String unit) {
    switch (unit) {
      case "s":
        return 1_000_000;
      case "ms":
        return 1_000;
      case "us":
        return 1;
      default:
        throw new IllegalArgumentException("timestamp unit " + unit + " is not s, ms or us");
    }
  }

  static JsonFactory factory() {
    return JsonFactory.builder()
        .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS) // Python reads NaN, Infinity
        // a key twice is refused as the line is read, before anything of it is tallied
        // (Python sets such a record aside whole: docs/rules.md)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .enable(JsonWriteFeature.ESCAPE_NON_ASCII) // payloads in ASCII: lone surrogates survive
        .build();
  }

  static final class Observer
      implements Function2<Integer, Iterator<InternalRow>, Iterator<String>>, Serializable {
    private static final long serialVersionUID = 1L;
    final boolean detectDates;
    final int per;

    Observer(boolean detectDates, int per) {
      this.detectDates = detectDates;
      this.per = per;
    }

    @Override
    public Iterator<String> call(Integer partition, Iterator<InternalRow> rows) {
      PartitionTally t = new PartitionTally(detectDates, per);
      String reason = null;
      while (reason == null && rows.hasNext()) {
        InternalRow row = rows.next();
        if (row.isNullAt(0)) continue; // the Python path skips null lines too
        UTF8String s = row.getUTF8String(0);
        Object base = s.getBaseObject();
        if (base instanceof byte[]) {
          int off = (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET);
          reason = t.line((byte[]) base, off, s.numBytes());
        } else {
          byte[] b = s.getBytes();
          reason = t.line(b, 0, b.length);
        }
      }
      return Collections.singletonList(t.payload(partition, reason)).iterator();
    }
  }

  /** Observations of one path (key sequence), whatever the dimensions of the records above. */
  static final class PathNode {
    final String name;
    final PathNode parent;
    final HashMap<String, PathNode> children = new HashMap<>();
    long seq;
    final byte[] scalarTaken = new byte[SCALARS];
    HashMap<Integer, Integer> arrayTaken;
    final ArrayList<Object[]> samples = new ArrayList<>(4);
    /**
     * Where each kind code arrived (issue #28, where drift starts): the first and last
     * record of the partition (counted from 1; 0: not yet) holding a value of it. Scalars in
     * two arrays, arrays in a map filled once per code: no allocation per value.
     */
    final long[] firstAt = new long[SCALARS];
    final long[] lastAt = new long[SCALARS];
    HashMap<Integer, long[]> arrayAt;

    void seenAt(int code, long record) {
      if (code < SCALARS) {
        if (firstAt[code] == 0) firstAt[code] = record;
        lastAt[code] = record;
        return;
      }
      if (arrayAt == null) arrayAt = new HashMap<>();
      long[] at = arrayAt.get(code);
      if (at == null) arrayAt.put(code, new long[] {record, record});
      else at[1] = record;
    }

    PathNode(String name, PathNode parent) {
      this.name = name;
      this.parent = parent;
    }

    PathNode child(String key) {
      PathNode c = children.get(key);
      if (c == null) {
        c = new PathNode(key, this);
        children.put(key, c);
      }
      return c;
    }

    /** Whether a value of this kind code is among the first SAMPLES of its code here. */
    boolean wants(int code) {
      if (code < SCALARS) {
        if (scalarTaken[code] >= SAMPLES) return false;
        scalarTaken[code]++;
        return true;
      }
      if (arrayTaken == null) arrayTaken = new HashMap<>();
      int n = arrayTaken.getOrDefault(code, 0);
      if (n >= SAMPLES) return false;
      arrayTaken.put(code, n + 1);
      return true;
    }

    List<String> path() {
      ArrayList<String> out = new ArrayList<>();
      for (PathNode p = this; p.parent != null; p = p.parent) out.add(p.name);
      Collections.reverse(out);
      return out;
    }
  }

  /** One struct level of the Summary: records counted, and a field per key. */
  static final class Level {
    long rows;
    final HashMap<String, Field> fields = new HashMap<>();
    final PathNode path;

    Level(PathNode path) {
      this.path = path;
    }

    Field field(String key) {
      Field f = fields.get(key);
      if (f == null) {
        f = new Field(path.child(key));
        fields.put(key, f);
      }
      return f;
    }
  }

  static final class Field {
    /** the last record that had this key (see walkRecord) */
    long seenIn;
    final long[] scalars = new long[SCALARS];
    HashMap<Integer, long[]> arrays;
    HashMap<Integer, Level> records;
    final PathNode path;

    Field(PathNode path) {
      this.path = path;
    }

    /** One array of kind {@code code}: counted, and its leaves per class ({@code leaves}). */
    void countArray(int code, int[] leaves) {
      if (arrays == null) arrays = new HashMap<>();
      long[] n = arrays.get(code);
      if (n == null) arrays.put(code, n = new long[1 + SCALARS]);
      n[0]++;
      for (int c = 0; c < SCALARS; c++) n[1 + c] += leaves[c];
    }

    Level records(int dim) {
      if (records == null) records = new HashMap<>();
      Level l = records.get(dim);
      if (l == null) {
        l = new Level(path);
        records.put(dim, l);
      }
      return l;
    }
  }

  static final class PartitionTally {
    static final byte OBJ = 1;
    static final byte ARR = 2;
    static final byte FIELD = 3;
    static final byte SCALAR = 4;

    final JsonFactory factory = factory();
    final boolean detectDates;
    final int per;
    final PathNode rootPath = new PathNode(null, null);
    final Level root = new Level(rootPath);

    // The tape of one line: a token per entry. For OBJ/ARR, aux is the entry after its end;
    // for SCALAR, its kind code (-1: null). Offsets are byte offsets into buf.
    byte[] type = new byte[256];
    int[] start = new int[256];
    int[] end = new int[256];
    int[] aux = new int[256];
    String[] names = new String[256];
    // With keep (the router), each scalar's value: lv holds a boolean (0/1), a long, a
    // double's bits, a date's epoch day or a timestamp's epoch microseconds; sv the text of
    // a JSON string, and of an integer beyond 64 bits.
    boolean keep;
    long[] lv = new long[256];
    String[] sv = new String[256];
    /** the byte length of a JSON text without escapes (its UTF-8 follows start + 1), or -1 */
    int[] aux2 = new int[256];
    /** the epoch day or microseconds stringKind / intKind found for the current token */
    long parsed;
    /** of the current JSON text: its byte length without escapes (else -1), its decoding */
    int raw;
    String escaped;
    int[] stack = new int[64];
    int n;
    byte[] buf;
    int base;
    int limit;

    PartitionTally(boolean detectDates, int per) {
      this.detectDates = detectDates;
      this.per = per;
    }

    /** Tallies one line; a reason to fall back to the Python path, or null. */
    String line(byte[] b, int off, int len) {
      String reason = read(b, off, len);
      if (reason == BLANK) return null;
      if (reason != null) return reason;
      return tallyRead();
    }

    /**
     * Tallies the record {@link #read} just put on the tape (the router tallies what it
     * routes this way): null, or a reason to leave the partition to the Python path.
     */
    String tallyRead() {
      walkRecord(0, root);
      // Python keeps a duplicate key's last value: the partition goes to it (what was
      // tallied of it is dropped with the rest of the partition's tally)
      if (badKey) return "a key with a lone surrogate escape";
      return duplicate ? "a duplicate key" : null;
    }

    boolean badKey;

    /** Whether a text has a UTF-8 form: no surrogate without its pair. */
    static boolean wellFormed(String text) {
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        if (Character.isSurrogate(c)) {
          if (!Character.isHighSurrogate(c)
              || i + 1 == text.length()
              || !Character.isLowSurrogate(text.charAt(i + 1))) {
            return false;
          }
          i++;
        }
      }
      return true;
    }

    /** a serial number per record walked, and whether one had a key twice */
    long records;
    boolean duplicate;

    /** what {@link #read} says of a line the Python path skips */
    static final String BLANK = "blank";

    /** what {@link #read} says of a line whose bytes are not UTF-8 */
    static final String NOT_UTF8 = "bytes that are not UTF-8";

    /** Whether bytes [from, to) are UTF-8 as Python's strict decoder reads it. */
    static boolean utf8(byte[] b, int from, int to) {
      int i = from;
      while (i < to) {
        int c = b[i];
        if (c >= 0) {
          i++;
          continue;
        }
        c &= 0xFF;
        if (c < 0xC2) return false; // a continuation byte, or an overlong 2-byte form
        if (c < 0xE0) {
          if (i + 1 >= to || (b[i + 1] & 0xC0) != 0x80) return false;
          i += 2;
        } else if (c < 0xF0) {
          if (i + 2 >= to) return false;
          int c1 = b[i + 1] & 0xFF;
          if ((c1 & 0xC0) != 0x80 || (b[i + 2] & 0xC0) != 0x80) return false;
          if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return false;
          i += 3;
        } else if (c < 0xF5) {
          if (i + 3 >= to) return false;
          int c1 = b[i + 1] & 0xFF;
          if ((c1 & 0xC0) != 0x80 || (b[i + 2] & 0xC0) != 0x80 || (b[i + 3] & 0xC0) != 0x80) {
            return false;
          }
          if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return false;
          i += 4;
        } else {
          return false;
        }
      }
      return true;
    }

    /**
     * Lines the router set aside (it routes and tallies in one pass): per line, its file
     * (null: none), its line number there (-1: unknown), its bytes in base64 and why.
     */
    final ArrayList<Object[]> aside = new ArrayList<>();
    /** a reason the partition's tally cannot be trusted (a guard; null: it can) */
    String spoiled;

    /** Keeps a line the router does not route: Python reads it again and decides. */
    void setAside(byte[] b, int off, int len, String file, long number, String reason) {
      String data = Base64.getEncoder().encodeToString(Arrays.copyOfRange(b, off, off + len));
      aside.add(new Object[] {file, number, data, reason});
    }

    /**
     * Reads one line onto the tape: null when it is a record, BLANK, or a reason to leave
     * the line to the Python path.
     */
    String read(byte[] b, int off, int len) {
      int i = off;
      int stop = off + len;
      while (i < stop && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) i++;
      if (i == stop) return BLANK; // blank: the Python path skips it
      // Jackson lets some bytes Python's decoder refuses through (overlong forms, encoded
      // surrogates): the line is checked as Python decodes it first
      if (!utf8(b, off, stop)) return NOT_UTF8;
      if (b[i] != '{') return "a line that is not a JSON object";
      for (int k = off; k < Math.min(stop, off + 4); k++) {
        // Jackson would guess UTF-16/32 from zero bytes; Python reads UTF-8 only
        if (b[k] == 0) return "a NUL byte";
      }
      try {
        tokenize(b, off, len);
      } catch (IOException | RuntimeException e) {
        return "malformed: " + e.getMessage();
      }
      return null;
    }

    private void grow() {
      int size = type.length * 2;
      type = Arrays.copyOf(type, size);
      start = Arrays.copyOf(start, size);
      end = Arrays.copyOf(end, size);
      aux = Arrays.copyOf(aux, size);
      names = Arrays.copyOf(names, size);
      lv = Arrays.copyOf(lv, size);
      sv = Arrays.copyOf(sv, size);
      aux2 = Arrays.copyOf(aux2, size);
    }

    void tokenize(byte[] b, int off, int len) throws IOException {
      buf = b;
      base = off;
      limit = off + len;
      n = 0;
      int sp = 0;
      try (JsonParser p = factory.createParser(b, off, len)) {
        ParserBase pb = (ParserBase) p;
        // getTokenCharacterOffset() allocates nothing, but is off by a constant from the
        // token's byte offset (1 in UTF8StreamJsonParser); measure it once per line.
        long delta = 0;
        JsonToken t;
        while ((t = p.nextToken()) != null) {
          if (n == 0) delta = off + p.getTokenLocation().getByteOffset() - pb.getTokenCharacterOffset();
          if (n == type.length) grow();
          int at = (int) (pb.getTokenCharacterOffset() + delta);
          switch (t.id()) {
            case JsonTokenId.ID_START_OBJECT:
            case JsonTokenId.ID_START_ARRAY:
              type[n] = t.id() == JsonTokenId.ID_START_OBJECT ? OBJ : ARR;
              start[n] = at;
              // Python observes a record level in several nested calls: very deep lines
              // may exceed its recursion limit, and it sets them aside; so does it here
              if (sp == MAX_DEPTH) throw new JsonParseException(p, "nested too deeply");
              if (sp == stack.length) stack = Arrays.copyOf(stack, sp * 2);
              stack[sp++] = n++;
              break;
            case JsonTokenId.ID_END_OBJECT:
            case JsonTokenId.ID_END_ARRAY:
              int s = stack[--sp];
              aux[s] = n;
              end[s] = at + 1;
              if (sp == 0) {
                if (p.nextToken() != null) throw new JsonParseException(p, "extra data");
                return;
              }
              break;
            case JsonTokenId.ID_FIELD_NAME:
              type[n] = FIELD;
              names[n++] = p.currentName();
              break;
            default:
              type[n] = SCALAR;
              start[n] = at;
              aux[n] = scalarKind(p, t, at);
              if (t.id() == JsonTokenId.ID_STRING) {
                // an escaped text is decoded to look for a lone surrogate, which has no
                // UTF-8 form: Python refuses such a line as malformed, and so is it here
                raw = rawLength(at);
                escaped = raw < 0 ? p.getText() : null;
                if (escaped != null && !wellFormed(escaped)) {
                  throw new JsonParseException(p, "a lone surrogate escape");
                }
              }
              if (keep) keepValue(p, t, aux[n]);
              n++;
          }
        }
      }
      throw new IOException("unexpected end of line");
    }

    /**
     * Whether the JSON text opening at byte q may be an ISO date (four digits and a dash, as
     * stringKind asks first); an escape among its first bytes may spell a digit.
     */
    private boolean mayBeTemporal(int q) {
      byte[] b = buf;
      for (int i = q + 1; i <= q + 5; i++) {
        byte c = b[i];
        if (c == '\\') return true;
        if (i == q + 5 ? c != '-' : c < '0' || c > '9') return false;
      }
      return true;
    }

    /**
     * The byte length of the JSON text opening at byte q when its bytes are the text's UTF-8
     * (no escape), else -1. A surrogate spelled in UTF-8 (CESU) is left to Java's decoder.
     */
    int rawLength(int q) {
      byte[] b = buf;
      for (int i = q + 1; ; i++) {
        byte c = b[i];
        if (c == '"') return i - q - 1;
        if (c == '\\' || (c == (byte) 0xED && (b[i + 1] & 0xE0) == 0xA0)) return -1;
      }
    }

    private void keepValue(JsonParser p, JsonToken t, int code) throws IOException {
      sv[n] = null;
      aux2[n] = -1;
      switch (t.id()) {
        case JsonTokenId.ID_TRUE:
          lv[n] = 1;
          break;
        case JsonTokenId.ID_FALSE:
          lv[n] = 0;
          break;
        case JsonTokenId.ID_NUMBER_INT:
          if (code == STRING) sv[n] = p.getText();
          else lv[n] = parsed;
          break;
        case JsonTokenId.ID_NUMBER_FLOAT:
          if (code == STRING) sv[n] = p.getText(); // beyond the double range: its literal
          else lv[n] = Double.doubleToRawLongBits(p.getDoubleValue());
          break;
        case JsonTokenId.ID_STRING:
          sv[n] = escaped; // else the router copies its bytes
          aux2[n] = raw;
          if (code != STRING) lv[n] = parsed;
          break;
        default:
      }
    }

    private int scalarKind(JsonParser p, JsonToken t, int at) throws IOException {
      switch (t.id()) {
        case JsonTokenId.ID_NULL:
          return -1;
        case JsonTokenId.ID_TRUE:
        case JsonTokenId.ID_FALSE:
          return BOOLEAN;
        case JsonTokenId.ID_NUMBER_INT:
          return intKind(p);
        case JsonTokenId.ID_NUMBER_FLOAT:
          if (p.isNaN()) {
            String text = p.getText();
            // Jackson also reads +Infinity, INF...: Python does not
            if (!text.equals("NaN") && !text.equals("Infinity") && !text.equals("-Infinity")) {
              throw new JsonParseException(p, "non-numeric number " + text);
            }
            return DOUBLE;
          }
          return outOfRange(p) ? STRING : DOUBLE;
        case JsonTokenId.ID_STRING:
          // decoding a text costs more than the rest of its walk: only candidates are
          if (!detectDates || !mayBeTemporal(at)) return STRING;
          return stringKind(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
        default:
          throw new JsonParseException(p, "unexpected token " + t);
      }
    }

    /**
     * Whether a number with a fraction or an exponent is no double: beyond the range (a
     * double reads infinity), nonzero below it (a double reads 0.0), or with digits that are
     * not its double's own (more than 15 significant ones, or a subnormal's, unlike the
     * double's exact value rounded to as many: jsonlines._exact_float). Only a literal with
     * an exponent of three digits, of 300 characters or of 16 significant digits can be: the
     * others are not parsed here.
     */
    static boolean outOfRange(JsonParser p) throws IOException {
      char[] c = p.getTextCharacters();
      int off = p.getTextOffset();
      int len = p.getTextLength();
      // one pass over the mantissa: where it ends, and its significant digits (from the
      // first nonzero digit to the last: -0.0012300 has 3)
      int e = off;
      int first = -1;
      int last = -1;
      int count = 0;
      for (; e < off + len; e++) {
        char ch = c[e];
        if (ch == 'e' || ch == 'E') break;
        if (ch < '0' || ch > '9') continue;
        if (ch != '0') {
          if (first < 0) first = count;
          last = count;
        }
        count++;
      }
      int significant = first < 0 ? 0 : last - first + 1;
      int digits = 0;
      for (int i = e + 1; i < off + len; i++) if (c[i] >= '0' && c[i] <= '9') digits++;
      // (a subnormal double holds fewer digits: its exponent has three of them)
      if (digits < 3 && len < 300 && significant <= DOUBLE_DIGITS) return false;
      double d = p.getDoubleValue();
      if (Double.isInfinite(d)) return true;
      if (d == 0) {
        for (int i = off; i < e; i++) if (c[i] >= '1' && c[i] <= '9') return true;
        return false;
      }
      if (significant <= DOUBLE_DIGITS && Math.abs(d) >= Double.MIN_NORMAL) return false;
      // a double's own digits, however many a writer printed, give it back (jsonlines.py)
      BigDecimal written = new BigDecimal(c, off, len).abs();
      BigDecimal own = new BigDecimal(Math.abs(d))
          .round(new MathContext(Math.max(significant, 1), RoundingMode.HALF_EVEN));
      return written.compareTo(own) != 0
          && written.compareTo(Router.shortest(Math.abs(d))) != 0;
    }

    /** A double keeps every literal of at most 15 significant digits (DBL_DIG). */
    private static final int DOUBLE_DIGITS = 15;

    private int intKind(JsonParser p) throws IOException {
      long v;
      if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
        BigInteger big = p.getBigIntegerValue();
        if (big.bitLength() > 63) return STRING; // RULES 1: beyond 64 bits, text
        v = big.longValue();
      } else {
        v = p.getLongValue();
      }
      parsed = v;
      if (v >= -DOUBLE_EXACT && v <= DOUBLE_EXACT) return LONG;
      double d = (double) v;
      // (long) 2**63 saturates to Long.MAX_VALUE: compare with 2**63 first
      return d == 0x1p63 || (long) d != v ? LONG_LOSSY : LONG;
    }

    private static boolean digits(char[] c, int from, int count) {
      for (int i = from; i < from + count; i++) {
        if (c[i] < '0' || c[i] > '9') return false;
      }
      return true;
    }

    private static int number(char[] c, int from, int count) {
      int v = 0;
      for (int i = from; i < from + count; i++) v = v * 10 + (c[i] - '0');
      return v;
    }

    /**
     * RULES 1: ISO texts, as conversions.parse_date / parse_timestamp read them. Python's
     * {@code \d} and {@code isdigit} accept non-ASCII digits, but {@code fromisoformat} then
     * refuses them: any non-ASCII text is a string either way.
     */
    int stringKind(char[] c, int off, int len) {
      if (len < 5 || !digits(c, off, 4) || c[off + 4] != '-') return STRING;
      if (len == 10) {
        if (!digits(c, off + 5, 2) || c[off + 7] != '-' || !digits(c, off + 8, 2)) return STRING;
        int y = number(c, off, 4);
        int m = number(c, off + 5, 2);
        int d = number(c, off + 8, 2);
        if (!validDate(y, m, d)) return STRING;
        parsed = LocalDate.of(y, m, d).toEpochDay();
        return DATE;
      }
      // \d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?
      if (len < 16) return STRING;
      int e = off + len;
      if (!digits(c, off + 5, 2) || c[off + 7] != '-' || !digits(c, off + 8, 2)) return STRING;
      if (c[off + 10] != 'T' && c[off + 10] != ' ') return STRING;
      if (!digits(c, off + 11, 2) || c[off + 13] != ':' || !digits(c, off + 14, 2)) return STRING;
      int year = number(c, off, 4);
      int month = number(c, off + 5, 2);
      int day = number(c, off + 8, 2);
      int hour = number(c, off + 11, 2);
      int minute = number(c, off + 14, 2);
      int second = 0;
      int micro = 0;
      int i = off + 16;
      if (i < e && c[i] == ':') {
        if (i + 3 > e || !digits(c, i + 1, 2)) return STRING;
        second = number(c, i + 1, 2);
        i += 3;
        if (i < e && c[i] == '.') {
          int j = i + 1;
          while (j < e && j - i <= 6 && c[j] >= '0' && c[j] <= '9') j++;
          int count = j - i - 1;
          if (count < 1 || (j < e && c[j] >= '0' && c[j] <= '9')) return STRING;
          micro = number(c, i + 1, count);
          for (int k = count; k < 6; k++) micro *= 10;
          i = j;
        }
      }
      boolean aware = false;
      int offsetMinutes = 0;
      if (i < e) {
        aware = true;
        if (c[i] == 'Z') {
          if (i + 1 != e) return STRING;
        } else if (c[i] == '+' || c[i] == '-') {
          if (i + 3 > e || !digits(c, i + 1, 2)) return STRING;
          int hh = number(c, i + 1, 2);
          int mm = 0;
          int j = i + 3;
          if (j < e) {
            if (c[j] == ':') j++;
            if (j + 2 != e || !digits(c, j, 2)) return STRING;
            mm = number(c, j, 2);
          }
          offsetMinutes = hh * 60 + mm; // Python takes +05:99 as 6:39
          if (offsetMinutes >= 24 * 60) return STRING;
          if (c[i] == '-') offsetMinutes = -offsetMinutes;
        } else {
          return STRING;
        }
      }
      if (!validDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return STRING;
      long epochSecond =
          LocalDate.of(year, month, day).toEpochDay() * 86_400L
              + hour * 3600L
              + minute * 60L
              + second
              - offsetMinutes * 60L;
      // as_utc: an aware text whose UTC instant leaves years 1-9999 stays a string
      if (aware && (epochSecond < MIN_SECOND || epochSecond >= END_SECOND)) return STRING;
      parsed = epochSecond * 1_000_000L + micro;
      return timestampKind(epochSecond, micro);
    }

    static final long MIN_SECOND = LocalDate.of(1, 1, 1).toEpochDay() * 86_400L;
    static final long END_SECOND = LocalDate.of(10000, 1, 1).toEpochDay() * 86_400L;

    private static boolean validDate(int year, int month, int day) {
      if (year < 1 || month < 1 || month > 12 || day < 1) return false;
      return day <= LocalDate.of(year, month, 1).lengthOfMonth();
    }

    /** observe.Classifier._timestamp_kind, as a class the Classifier types alike. */
    private int timestampKind(long epochSecond, int micro) {
      if (micro == 0 || (per > 1 && micro % per == 0)) return TIMESTAMP;
      if (per > 1) return TIMESTAMP_FRACTION;
      long micros = epochSecond * 1_000_000L + micro;
      if (micros >= -DOUBLE_EXACT && micros <= DOUBLE_EXACT) return TIMESTAMP_FRACTION;
      return (long) (double) micros == micros ? TIMESTAMP_FRACTION : TIMESTAMP_FAR;
    }

    // ------------------------------------------------------------------ the walk

    private void walkRecord(int i, Level level) {
      level.rows++;
      long serial = ++records;
      int stop = aux[i];
      int j = i + 1;
      while (j < stop) {
        Field f = level.field(names[j]); // null values too: the key exists at this level
        if (f.seenIn == serial) duplicate = true;
        if (f.seenIn == 0 && !wellFormed(names[j])) badKey = true; // a new key
        f.seenIn = serial;
        j = walkValue(j + 1, f);
      }
    }

    private int walkValue(int j, Field f) {
      byte t = type[j];
      if (t == SCALAR) {
        int code = aux[j];
        if (code >= 0) {
          f.scalars[code]++;
          sample(f.path, code, j);
        }
        return j + 1;
      }
      if (t == OBJ) {
        f.scalars[RECORD]++;
        sample(f.path, RECORD, j);
        walkRecord(j, f.records(0));
        return aux[j];
      }
      int code = arrayCode(j);
      f.countArray(code, leafCount);
      sample(f.path, code, j);
      if ((mask & 1 << RECORD) != 0) {
        // RULES 3.4 / summary: records of an array of records, by exact dimension (those
        // of an array mixing records and primitives too: they go to a record column)
        walkRecords(j, f.records(depth));
      }
      return aux[j];
    }

    int depth;
    int mask;
    /** the non-null leaves of the array scanned last, per class */
    final int[] leafCount = new int[SCALARS];

    /** The kind code of the array at tape entry j. */
    int arrayCode(int j) {
      depth = 0;
      mask = 0;
      Arrays.fill(leafCount, 0);
      scanArray(j, 1);
      return depth << ARRAY_SHIFT | mask;
    }

    /** RULES 1: dimension = deepest nesting; leaves = the classes of non-null leaves. */
    void scanArray(int i, int level) {
      if (level > depth) depth = level;
      int stop = aux[i];
      int j = i + 1;
      while (j < stop) {
        byte t = type[j];
        if (t == SCALAR) {
          if (aux[j] >= 0) {
            mask |= 1 << aux[j];
            leafCount[aux[j]]++;
          }
          j++;
        } else if (t == OBJ) {
          mask |= 1 << RECORD;
          j = aux[j];
        } else {
          scanArray(j, level + 1);
          j = aux[j];
        }
      }
    }

    /** Every record in an array of records, depth first (observe._collect_dicts). */
    private void walkRecords(int i, Level level) {
      int stop = aux[i];
      int j = i + 1;
      while (j < stop) {
        byte t = type[j];
        if (t == OBJ) {
          walkRecord(j, level);
          j = aux[j];
        } else if (t == ARR) {
          walkRecords(j, level);
          j = aux[j];
        } else {
          j++;
        }
      }
    }

    private void sample(PathNode path, int code, int j) {
      path.seenAt(code, root.rows); // the top-level record being walked
      long seq = path.seq++;
      if (!path.wants(code)) return;
      int from = start[j];
      int to = type[j] == SCALAR ? scalarEnd(from) : end[j];
      String text = new String(buf, from, to - from, StandardCharsets.UTF_8);
      path.samples.add(new Object[] {code, seq, text});
    }

    private int scalarEnd(int s) {
      if (buf[s] == '"') {
        int i = s + 1;
        while (buf[i] != '"') i += buf[i] == '\\' ? 2 : 1;
        return i + 1;
      }
      int i = s;
      while (i < limit) {
        byte c = buf[i];
        if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          break;
        }
        i++;
      }
      return i;
    }

    // ------------------------------------------------------------------ the payload

    String payload(int partition, String fallback) {
      StringWriter w = new StringWriter();
      try (JsonGenerator g = factory.createGenerator(w)) {
        g.writeStartObject();
        g.writeNumberField("partition", partition);
        if (fallback == null) fallback = spoiled;
        if (fallback != null) {
          g.writeStringField("fallback", fallback);
        } else {
          if (!aside.isEmpty()) {
            g.writeArrayFieldStart("aside");
            for (Object[] a : aside) {
              g.writeStartArray();
              g.writeString((String) a[0]);
              g.writeNumber((Long) a[1]);
              g.writeString((String) a[2]);
              g.writeString((String) a[3]);
              g.writeEndArray();
            }
            g.writeEndArray();
          }
          g.writeFieldName("summary");
          writeLevel(g, root);
          g.writeArrayFieldStart("samples");
          writeSamples(g, rootPath);
          g.writeEndArray();
          g.writeArrayFieldStart("seen");
          writeSeen(g, rootPath);
          g.writeEndArray();
        }
        g.writeEndObject();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      return w.toString();
    }

    private static void writeLevel(JsonGenerator g, Level level) throws IOException {
      g.writeStartObject();
      g.writeNumberField("rows", level.rows);
      g.writeObjectFieldStart("fields");
      for (Map.Entry<String, Field> e : level.fields.entrySet()) {
        Field f = e.getValue();
        g.writeObjectFieldStart(e.getKey());
        g.writeArrayFieldStart("counts");
        for (int c = 0; c < SCALARS; c++) {
          if (f.scalars[c] > 0) {
            g.writeNumber(c);
            g.writeNumber(f.scalars[c]);
          }
        }
        if (f.arrays != null) {
          for (Map.Entry<Integer, long[]> a : f.arrays.entrySet()) {
            g.writeNumber(a.getKey());
            g.writeNumber(a.getValue()[0]);
          }
        }
        g.writeEndArray();
        // the leaves per class of arrays whose primitive leaves are of several classes
        // (conversion warnings: RULES 1 writes them as the array's widest; Python keeps the
        // arrays of several types, as observe.Classifier names them)
        if (f.arrays != null) {
          boolean started = false;
          for (Map.Entry<Integer, long[]> a : f.arrays.entrySet()) {
            int classes = a.getKey() & ((1 << ARRAY_SHIFT) - 1) & ~(1 << RECORD);
            if (Integer.bitCount(classes) < 2) continue;
            if (!started) {
              g.writeArrayFieldStart("leaves");
              started = true;
            }
            for (int c = 0; c < SCALARS; c++) {
              if (a.getValue()[1 + c] > 0) {
                g.writeNumber(a.getKey());
                g.writeNumber(c);
                g.writeNumber(a.getValue()[1 + c]);
              }
            }
          }
          if (started) g.writeEndArray();
        }
        g.writeArrayFieldStart("records");
        if (f.records != null) {
          for (Map.Entry<Integer, Level> r : f.records.entrySet()) {
            g.writeStartArray();
            g.writeNumber(r.getKey());
            writeLevel(g, r.getValue());
            g.writeEndArray();
          }
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndObject();
      g.writeEndObject();
    }

    /** Per path and kind code: [path, code, first record, last record]. */
    private static void writeSeen(JsonGenerator g, PathNode node) throws IOException {
      List<String> path = null;
      for (int c = 0; c < SCALARS; c++) {
        if (node.firstAt[c] > 0) {
          if (path == null) path = node.path();
          writeAt(g, path, c, node.firstAt[c], node.lastAt[c]);
        }
      }
      if (node.arrayAt != null) {
        if (path == null) path = node.path();
        for (Map.Entry<Integer, long[]> a : node.arrayAt.entrySet()) {
          writeAt(g, path, a.getKey(), a.getValue()[0], a.getValue()[1]);
        }
      }
      for (PathNode c : node.children.values()) writeSeen(g, c);
    }

    private static void writeAt(JsonGenerator g, List<String> path, int code, long first,
        long last) throws IOException {
      g.writeStartArray();
      g.writeStartArray();
      for (String key : path) g.writeString(key);
      g.writeEndArray();
      g.writeNumber(code);
      g.writeNumber(first);
      g.writeNumber(last);
      g.writeEndArray();
    }

    private static void writeSamples(JsonGenerator g, PathNode node) throws IOException {
      if (!node.samples.isEmpty()) {
        List<String> path = node.path();
        for (Object[] s : node.samples) {
          g.writeStartArray();
          g.writeStartArray();
          for (String key : path) g.writeString(key);
          g.writeEndArray();
          g.writeNumber((Integer) s[0]);
          g.writeNumber((Long) s[1]);
          g.writeString((String) s[2]);
          g.writeEndArray();
        }
      }
      for (PathNode c : node.children.values()) writeSamples(g, c);
    }
  }
}
