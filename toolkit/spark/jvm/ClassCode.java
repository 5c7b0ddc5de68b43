package toolkit.spark.jvm;

import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.IndexedSeq;

/**
 * The class of each value of a typed column, as a small integer (its class code; null for
 * a null): the tests toolkit/spark/columnar.py spells as Spark expressions
 * ({@code _class_code_of}, RULES 1 and 2), made by one call per value.
 *
 * <p>The Spark expressions of a text's date test alone are some eighty nodes: Spark's
 * analysis and optimiser walk them on every batch, and inlined into the write's generated
 * code they made its largest method 4,745 bytes of bytecode (1,286 with these calls, the
 * count included): a batch of 200,000 rows took 40 ms longer. The tests here are the same
 * ones, in the same order, with the same regular expressions and Spark's own string
 * functions; tests/spark hold the two equal value by value.
 */
public final class ClassCode extends JvmExpression {
  private static final long serialVersionUID = 1L;

  /** 2**53: a long within it converts exactly to a double. */
  static final long TWO_53 = 1L << 53;

  static final UTF8String DASH = UTF8String.fromString("-");
  static final Pattern FOUR_DIGITS = Pattern.compile("^\\p{N}{4}$");
  static final Pattern ISO_DATE = Pattern.compile("^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
  static final Pattern NOT_ASCII = Pattern.compile("[^\\x00-\\x7f]");

  /** What the column holds: a long, a text, or a timestamp's epoch microseconds. */
  enum Test {
    LONG,
    TEXT,
    /** classes whole, fraction (digits below {@code per} microseconds), far */
    TIME_UNIT,
    /** classes whole (microseconds a double holds), far */
    TIME_MICROS
  }

  final Expression child;
  final Test test;
  final long per;
  final long firstMicros;
  final long lastMicros;

  ClassCode(Expression child, Test test, long per, long firstMicros, long lastMicros) {
    this.child = child;
    this.test = test;
    this.per = per;
    this.firstMicros = firstMicros;
    this.lastMicros = lastMicros;
  }

  /** The class code of a long column's values: 0 exact, 1 lossy (RULES 2). */
  public static Column ofLong(Column values) {
    return new Column(new ClassCode(values.expr(), Test.LONG, 0, 0, 0));
  }

  /** The class code of a text column's values: 0 text, 1 date, 2 other (RULES 1). */
  public static Column ofText(Column values) {
    return new Column(new ClassCode(values.expr(), Test.TEXT, 0, 0, 0));
  }

  /**
   * The class code of a timestamp column's values: 0 whole, 1 fraction of {@code per}
   * microseconds, 2 far (outside {@code firstMicros}..{@code lastMicros}); or, {@code per}
   * 1 (an epoch unit of microseconds), 0 whole and 1 far (outside, or a count of
   * microseconds a double does not hold).
   */
  public static Column ofTime(Column values, long per, long firstMicros, long lastMicros) {
    Test test = per == 1 ? Test.TIME_MICROS : Test.TIME_UNIT;
    return new Column(new ClassCode(values.expr(), test, per, firstMicros, lastMicros));
  }

  /** Whether a long converts exactly to a double: its odd part holds in 53 bits. */
  public static boolean exactDouble(long v) {
    if (v >= -TWO_53 && v <= TWO_53) {
      return true;
    }
    if (v == Long.MIN_VALUE) {
      return true;
    }
    long low = v & -v; // a power of two dividing v: the quotient is v's odd part, exactly
    return Math.abs(v) / low <= TWO_53;
  }

  public static int longClass(long v) {
    return exactDouble(v) ? 0 : 1;
  }

  public static int textClass(UTF8String s) {
    // most texts have no dash, or none fifth: those tests alone decide them
    if (!s.contains(DASH)) {
      return 0;
    }
    if (!s.substringSQL(5, 1).equals(DASH)) {
      return 0;
    }
    if (!FOUR_DIGITS.matcher(s.substringSQL(1, 4).toString()).find(0)) {
      return 0;
    }
    String text = s.toString();
    if (ISO_DATE.matcher(text).find(0) && realDate(s)) {
      return 1;
    }
    if (s.numChars() != 10 || NOT_ASCII.matcher(text).find(0)) {
      return 2;
    }
    return 0;
  }

  /** Whether a text that starts {@code YYYY-MM-DD} (ASCII digits) names a real date. */
  static boolean realDate(UTF8String s) {
    int y = Integer.parseInt(s.substringSQL(1, 4).toString());
    int m = Integer.parseInt(s.substringSQL(6, 2).toString());
    int d = Integer.parseInt(s.substringSQL(9, 2).toString());
    boolean leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    int days = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
    return y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= days;
  }

  public static int timeClass(long micros, long per, long firstMicros, long lastMicros) {
    if (micros < firstMicros || micros > lastMicros) {
      return 2;
    }
    return micros % per == 0 ? 0 : 1;
  }

  public static int microsClass(long micros, long firstMicros, long lastMicros) {
    boolean inside = micros >= firstMicros && micros <= lastMicros;
    boolean whole = micros % 1_000_000L == 0 || exactDouble(micros);
    return inside && whole ? 0 : 1;
  }

  int classOf(Object value) {
    switch (test) {
      case LONG:
        return longClass((Long) value);
      case TEXT:
        return textClass((UTF8String) value);
      case TIME_UNIT:
        return timeClass((Long) value, per, firstMicros, lastMicros);
      default:
        return microsClass((Long) value, firstMicros, lastMicros);
    }
  }

  private String call(String value) {
    String self = ClassCode.class.getName();
    switch (test) {
      case LONG:
        return self + ".longClass(" + value + ")";
      case TEXT:
        return self + ".textClass(" + value + ")";
      case TIME_UNIT:
        return self + ".timeClass(" + value + ", " + per + "L, " + firstMicros + "L, "
            + lastMicros + "L)";
      default:
        return self + ".microsClass(" + value + ", " + firstMicros + "L, " + lastMicros + "L)";
    }
  }

  @Override
  public Object eval(InternalRow input) {
    Object value = child.eval(input);
    return value == null ? null : classOf(value);
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode in = child.genCode(ctx);
    String code =
        in.code().toString()
            + "\nboolean " + ev.isNull() + " = " + in.isNull() + ";\n"
            + "int " + ev.value() + " = " + ev.isNull() + " ? -1 : " + call(in.value().toString())
            + ";";
    return new ExprCode(block(code), ev.isNull(), ev.value());
  }

  @Override
  public DataType dataType() {
    return DataTypes.IntegerType;
  }

  @Override
  public boolean nullable() {
    return child.nullable();
  }

  @Override
  List<Expression> inputs() {
    return Collections.singletonList(child);
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new ClassCode(children.apply(0), test, per, firstMicros, lastMicros);
  }

  @Override
  public boolean equals(Object that) {
    if (!(that instanceof ClassCode)) {
      return false;
    }
    ClassCode other = (ClassCode) that;
    return test == other.test && per == other.per && firstMicros == other.firstMicros
        && lastMicros == other.lastMicros && child.equals(other.child);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(test, per, firstMicros, lastMicros, child);
  }
}
