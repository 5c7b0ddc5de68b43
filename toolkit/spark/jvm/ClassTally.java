package toolkit.spark.jvm;

import java.util.Arrays;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.TaskCompletionListener;

/**
 * Counts the value classes of typed columns as their rows pass on to be written (the one
 * pass of typed sources: toolkit/pipeline/typed.py).
 *
 * <p>Which class a value is in is not decided here: toolkit/spark/columnar.py computes each
 * column's class as a small integer (its class code) with Spark expressions, once per row,
 * and packs the codes of up to a few dozen columns into one long, a digit per column (0: a
 * null; c + 1: class c). What runs here is the counting: per column and class, how many
 * values, and the places (within the partition) of the first and last one.
 *
 * <p>It runs as a user-defined function that always says yes, in a filter Spark may not
 * move or drop (the function is marked non-deterministic): the filter sits inside the
 * write's own generated code, between the class codes and the routing projection, so the
 * rows are neither copied nor handed through an RDD of their own, and the codes are
 * computed once. Spark's {@code observe}
 * does the same counting with one aggregate per count, which costs several times the write
 * itself.
 *
 * <p>Spark gives every task its own copy of the function, so a copy's counts are one
 * partition's. When its task ends the copy adds one payload to the accumulator: {@code pack
 * partition rows} then, per class, {@code count first last}, space-separated. A partition
 * without rows calls the function never and sends nothing. A task may run more than once:
 * every run of a partition adds the same payload, and the driver keeps one per partition.
 */
public final class ClassTally implements UDF1<Long, Boolean> {
  private static final long serialVersionUID = 1L;
  /** The column of the calls' answers (always true). */
  public static final String COLUMN = "toolkit_tally";

  final int pack;
  final int[] bases;
  final CollectionAccumulator<String> payloads;
  private transient long[] count;
  private transient long[] first;
  private transient long[] last;
  private transient int[] offset;
  private transient long rows;

  /**
   * @param pack which of the batch's packs of columns this copy counts
   * @param bases per column of the pack, its classes plus one (the digits' bases, the
   *     first column's digit lowest)
   */
  public ClassTally(int pack, int[] bases, CollectionAccumulator<String> payloads) {
    this.pack = pack;
    this.bases = bases;
    this.payloads = payloads;
  }

  /**
   * {@code child}'s rows counted as a job reads them (a copy of this function per pack),
   * with one more column, {@link #COLUMN}: a plan not analysed yet ({@link Plans}).
   *
   * @param packs per pack, the long column of its columns' class digits
   * @param bases every pack's bases, one pack after the other
   * @param sizes per pack, how many of {@code bases} are its
   * @param also a column always true evaluated with the counting ({@link HeadRows}), or null
   */
  public static LogicalPlan counted(
      LogicalPlan child,
      Column[] packs,
      int[] bases,
      int[] sizes,
      CollectionAccumulator<String> payloads,
      Column also) {
    Column keep = also;
    int from = 0;
    for (int i = 0; i < packs.length; i++) {
      int[] own = Arrays.copyOfRange(bases, from, from + sizes[i]);
      from += sizes[i];
      UserDefinedFunction fn =
          functions.udf(new ClassTally(i, own, payloads), DataTypes.BooleanType)
              .asNondeterministic();
      Column yes = fn.apply(packs[i]);
      keep = keep == null ? yes : keep.and(yes);
    }
    if (keep == null) {
      return child;
    }
    // a column first, then a filter on it: Spark moves no filter below a projection with a
    // non-deterministic column, so the class codes the calls read are the very ones the
    // routing reads (a filter moved down would compute them a second time)
    Column[] withKeep = {functions.col("*"), keep.as(COLUMN)};
    return Plans.where(Plans.select(child, withKeep), functions.col(COLUMN));
  }

  @Override
  public Boolean call(Long packed) {
    if (count == null) {
      start();
    }
    long at = rows++;
    long p = packed == null ? 0L : packed;
    for (int j = 0; j < bases.length && p != 0L; j++) {
      int digit = (int) (p % bases[j]);
      p /= bases[j];
      if (digit == 0) {
        continue;
      }
      int k = offset[j] + digit - 1;
      if (count[k]++ == 0) {
        first[k] = at;
      }
      last[k] = at;
    }
    return Boolean.TRUE;
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
}
