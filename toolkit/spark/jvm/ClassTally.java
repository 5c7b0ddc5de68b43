package toolkit.spark.jvm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.FalseLiteral$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.TaskCompletionListener;
import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;

/**
 * Counts the value classes of typed columns as their rows pass on to be written (the one
 * pass of typed sources: toolkit/pipeline/typed.py).
 *
 * <p>Which class a value is in is not decided here: toolkit/spark/columnar.py computes each
 * column's class as a small integer (its class code) with Spark expressions, once per row.
 * What runs here is the counting: per column and class, how many values, and the places
 * (within the partition) of the first and last one.
 *
 * <p>It is an expression, always true, on a pack of columns: per column, its class code
 * (class c counts as c) or, for a column of one class, its value (any value counts as that
 * class); a null counts nowhere. It has its own generated code: the write's generated code
 * calls {@link #next} once per row and {@link #add} per value, on primitive ints, where a
 * user-defined function boxed a packed long per row and took it apart by divisions (half
 * the cost of the count). It sits in a filter Spark may not move or drop (it says it is
 * not deterministic), inside the write's own generated code, between the class codes and
 * the routing projection, so the rows are neither copied nor handed through an RDD of
 * their own, and the codes are computed once. Spark's {@code observe} does the same
 * counting with one aggregate per count, which costs several times the write itself.
 *
 * <p>Spark gives every task its own copy of the expression, so a copy's counts are one
 * partition's. When its task ends the copy adds one payload to the accumulator: {@code pack
 * partition rows} then, per class, {@code count first last}, space-separated. A partition
 * without rows evaluates it never and sends nothing. A task may run more than once: every
 * run of a partition adds the same payload, and the driver keeps one per partition.
 */
public final class ClassTally extends JvmExpression {
  private static final long serialVersionUID = 2L;
  /** The column of the expressions' answers (always true). */
  public static final String COLUMN = "toolkit_tally";

  final List<Expression> values;
  final int pack;
  final boolean[] coded;
  final int[] bases;
  final CollectionAccumulator<String> payloads;
  private transient long[] count;
  private transient long[] first;
  private transient long[] last;
  private transient int[] offset;
  private transient long rows;

  /**
   * @param values per column of the pack, its class code, or its value when {@code coded}
   *     says it has one class
   * @param pack which of the batch's packs of columns this counts
   * @param bases per column of the pack, its classes plus one
   */
  ClassTally(
      List<Expression> values,
      int pack,
      boolean[] coded,
      int[] bases,
      CollectionAccumulator<String> payloads) {
    this.values = values;
    this.pack = pack;
    this.coded = coded;
    this.bases = bases;
    this.payloads = payloads;
  }

  /**
   * {@code child}'s rows counted as a job reads them (an expression per pack), with one
   * more column, {@link #COLUMN}: a plan not analysed yet ({@link Plans}).
   *
   * @param columns every column's class code, or its value (one class), pack after pack
   * @param coded per column, whether {@code columns} holds its class code
   * @param bases per column, its classes plus one
   * @param sizes per pack, how many of {@code columns} are its
   * @param also a column always true evaluated with the counting ({@link HeadRows}), or null
   */
  public static LogicalPlan counted(
      LogicalPlan child,
      Column[] columns,
      boolean[] coded,
      int[] bases,
      int[] sizes,
      CollectionAccumulator<String> payloads,
      Column also) {
    Column keep = also;
    int from = 0;
    for (int i = 0; i < sizes.length; i++) {
      List<Expression> own = new ArrayList<>(sizes[i]);
      for (int j = from; j < from + sizes[i]; j++) {
        own.add(columns[j].expr());
      }
      Column yes =
          new Column(
              new ClassTally(
                  own,
                  i,
                  Arrays.copyOfRange(coded, from, from + sizes[i]),
                  Arrays.copyOfRange(bases, from, from + sizes[i]),
                  payloads));
      from += sizes[i];
      keep = keep == null ? yes : keep.and(yes);
    }
    if (keep == null) {
      return child;
    }
    // a column first, then a filter on it: Spark moves no filter below a projection with a
    // non-deterministic column, so the class codes counted here are the very ones the
    // routing reads (a filter moved down would compute them a second time)
    Column[] withKeep = {functions.col("*"), keep.as(COLUMN)};
    return Plans.where(Plans.select(child, withKeep), functions.col(COLUMN));
  }

  /** Called by the generated code once per row, before {@link #add}: the row's place. */
  public long next() {
    if (count == null) {
      start();
    }
    return rows++;
  }

  /** Called by the generated code per value that is not null: its column and class. */
  public void add(int column, int cls, long at) {
    int k = offset[column] + cls;
    if (count[k]++ == 0) {
      first[k] = at;
    }
    last[k] = at;
  }

  private void start() {
    offset = new int[bases.length];
    int n = 0;
    for (int j = 0; j < bases.length; j++) {
      offset[j] = n;
      n += bases[j] - 1;
    }
    count = new long[n];
    first = new long[n];
    last = new long[n];
    Arrays.fill(first, -1L);
    TaskContext task = TaskContext.get();
    if (task != null) {
      // failed attempts' additions are dropped by Spark (the accumulator counts no failed
      // values): only a finished run's payload reaches the driver
      task.addTaskCompletionListener(
          new TaskCompletionListener() {
            @Override
            public void onTaskCompletion(TaskContext context) {
              payloads.add(payload(context.partitionId()));
            }
          });
    }
  }

  String payload(int partition) {
    StringBuilder out = new StringBuilder();
    out.append(pack).append(' ').append(partition).append(' ').append(rows);
    for (int k = 0; k < count.length; k++) {
      out.append(' ').append(count[k]).append(' ').append(first[k]).append(' ').append(last[k]);
    }
    return out.toString();
  }

  @Override
  public Object eval(InternalRow input) {
    long at = next();
    for (int j = 0; j < values.size(); j++) {
      Object value = values.get(j).eval(input);
      if (value != null) {
        add(j, coded[j] ? (Integer) value : 0, at);
      }
    }
    return Boolean.TRUE;
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    String self = ctx.addReferenceObj("classTally", this, ClassTally.class.getName());
    String at = ctx.freshName("at");
    StringBuilder code = new StringBuilder();
    code.append("long ").append(at).append(" = ").append(self).append(".next();\n");
    for (int j = 0; j < values.size(); j++) {
      ExprCode value = values.get(j).genCode(ctx);
      code.append(value.code().toString()).append("\nif (!(").append(value.isNull());
      code.append(")) {\n  ").append(self).append(".add(").append(j).append(", ");
      code.append(coded[j] ? value.value().toString() : "0").append(", ").append(at);
      code.append(");\n}\n");
    }
    code.append("boolean ").append(ev.value()).append(" = true;");
    return new ExprCode(block(code.toString()), FalseLiteral$.MODULE$, ev.value());
  }

  /** Not deterministic: Spark neither moves, merges nor drops it. */
  @Override
  public boolean deterministic() {
    return false;
  }

  @Override
  public DataType dataType() {
    return DataTypes.BooleanType;
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  List<Expression> inputs() {
    return values;
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new ClassTally(
        new ArrayList<>(JavaConverters.seqAsJavaList(children)), pack, coded, bases, payloads);
  }
}
