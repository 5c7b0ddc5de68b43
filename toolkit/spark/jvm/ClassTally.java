package toolkit.spark.jvm;

import java.io.Serializable;
import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.util.CollectionAccumulator;

/**
 * Counts the value classes of typed columns as their rows pass on to be written (the one
 * pass of typed sources: toolkit/pipeline/typed.py).
 *
 * <p>Which class a value is in is not decided here: toolkit/spark/columnar.py computes each
 * column's class as a small integer (its class code) with Spark expressions, once per row.
 * What runs here is the counting: per column and class, how many values, and the places
 * (within the partition) of the first and last one. Spark's own {@code observe} does the
 * same with one aggregate per count, which costs several times the write itself; this
 * costs a few array updates per row.
 *
 * <p>Each task adds one payload to the accumulator when its partition is done: {@code
 * partition rows} then, per class, {@code count first last}, space-separated. A task may
 * run more than once: every run of a partition adds the same payload, and the driver keeps
 * one per partition.
 */
public final class ClassTally {
  private ClassTally() {}

  /**
   * {@code df}'s rows, unchanged, counted as they are read.
   *
   * @param ordinals per counted column, the ordinal of its class code (an int column) or,
   *     for a column of one class, of the column itself (class 0 when not null)
   * @param coded per counted column, whether its ordinal is a class code
   * @param classes per counted column, how many classes it has
   */
  public static Dataset<Row> tallied(
      Dataset<Row> df,
      int[] ordinals,
      boolean[] coded,
      int[] classes,
      CollectionAccumulator<String> payloads) {
    CountFn fn = new CountFn(ordinals, coded, classes, payloads);
    JavaRDD<InternalRow> rows = df.queryExecution().toRdd().toJavaRDD().mapPartitions(fn);
    return df.sparkSession().internalCreateDataFrame(rows.rdd(), df.schema(), false);
  }

  /** The payloads gathered, one per line. */
  public static String payloadLines(CollectionAccumulator<String> payloads) {
    return String.join("\n", payloads.value());
  }

  static final class CountFn
      implements FlatMapFunction<Iterator<InternalRow>, InternalRow>, Serializable {
    private static final long serialVersionUID = 1L;
    final int[] ordinals;
    final boolean[] coded;
    final int[] classes;
    final CollectionAccumulator<String> payloads;

    CountFn(int[] ordinals, boolean[] coded, int[] classes, CollectionAccumulator<String> p) {
      this.ordinals = ordinals;
      this.coded = coded;
      this.classes = classes;
      this.payloads = p;
    }

    @Override
    public Iterator<InternalRow> call(Iterator<InternalRow> in) {
      return new Counting(this, in);
    }
  }

  static final class Counting implements Iterator<InternalRow> {
    final CountFn fn;
    final Iterator<InternalRow> in;
    final int[] offset;
    final long[] count;
    final long[] first;
    final long[] last;
    long rows;
    boolean sent;

    Counting(CountFn fn, Iterator<InternalRow> in) {
      this.fn = fn;
      this.in = in;
      offset = new int[fn.classes.length];
      int n = 0;
      for (int j = 0; j < fn.classes.length; j++) {
        offset[j] = n;
        n += fn.classes[j];
      }
      count = new long[n];
      first = new long[n];
      last = new long[n];
      java.util.Arrays.fill(first, -1L);
    }

    @Override
    public boolean hasNext() {
      boolean more = in.hasNext();
      if (!more && !sent) {
        sent = true;
        fn.payloads.add(payload());
      }
      return more;
    }

    @Override
    public InternalRow next() {
      InternalRow row = in.next();
      long at = rows++;
      for (int j = 0; j < fn.ordinals.length; j++) {
        int ordinal = fn.ordinals[j];
        if (row.isNullAt(ordinal)) {
          continue;
        }
        int k = offset[j] + (fn.coded[j] ? row.getInt(ordinal) : 0);
        if (count[k]++ == 0) {
          first[k] = at;
        }
        last[k] = at;
      }
      return row;
    }

    String payload() {
      TaskContext task = TaskContext.get();
      StringBuilder out = new StringBuilder();
      out.append(task == null ? 0 : task.partitionId()).append(' ').append(rows);
      for (int k = 0; k < count.length; k++) {
        out.append(' ').append(count[k]).append(' ').append(first[k]).append(' ').append(last[k]);
      }
      return out.toString();
    }
  }
}
