package toolkit.spark.jvm;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.FalseLiteral$;
import org.apache.spark.sql.execution.arrow.ArrowConverters;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.TaskCompletionListener;
import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;

/**
 * Keeps the first rows a write reads, as Arrow, for the profile's first samples (the one
 * pass of typed sources: toolkit/pipeline/typed.py), so that no Spark job of their own
 * reads them again.
 *
 * <p>An expression on a struct of the batch's values, always true, that keeps the values
 * it is given, up to a number of them per task. toolkit/spark/class_tally.py evaluates it
 * only for a partition's first rows (a condition on the row id decides, in Spark's own
 * generated code), inside the filter that counts the classes. When the task ends, its copy
 * adds one payload to the accumulator: {@code partition base64}, the rows as one Arrow IPC
 * stream, written by Spark's own converter with the session's time zone: the bytes the
 * driver's {@code _collect_as_arrow} gets for the same rows, so they read back as the
 * Python path reads them.
 *
 * <p>Its values are the internal rows themselves (a user-defined function would get them
 * converted to Java objects and back, which reorders maps), copied, since a reader
 * reuses its buffers.
 */
public final class HeadRows extends JvmExpression {
  private static final long serialVersionUID = 1L;

  final Expression child;
  final int limit;
  final String timeZone;
  final CollectionAccumulator<String> payloads;
  private transient List<InternalRow> kept;

  HeadRows(
      Expression child, int limit, String timeZone, CollectionAccumulator<String> payloads) {
    this.child = child;
    this.limit = limit;
    this.timeZone = timeZone;
    this.payloads = payloads;
  }

  /**
   * True, keeping {@code values} (a struct column) for the task's payload where {@code
   * first} holds, while the task has fewer than {@code limit} rows; the Arrow of the
   * payloads in {@code session}'s time zone.
   */
  public static Column kept(
      SparkSession session,
      Column values,
      Column first,
      int limit,
      CollectionAccumulator<String> payloads) {
    String zone = session.sessionState().conf().sessionLocalTimeZone();
    Column keep = new Column(new HeadRows(values.expr(), limit, zone, payloads));
    return functions.when(first, keep).otherwise(functions.lit(true));
  }

  /** Called by the generated code and by {@link #eval}: keeps {@code row}. */
  public boolean keep(InternalRow row) {
    if (kept == null) {
      kept = new ArrayList<>(limit);
      TaskContext task = TaskContext.get();
      if (task != null) {
        task.addTaskCompletionListener(
            new TaskCompletionListener() {
              @Override
              public void onTaskCompletion(TaskContext context) {
                String rows;
                try {
                  rows = arrow();
                } catch (RuntimeException e) {
                  return; // sent nothing: the driver reads the first rows with a job then
                }
                payloads.add(context.partitionId() + " " + rows);
              }
            });
      }
    }
    if (row != null && kept.size() < limit) {
      kept.add(row.copy());
    }
    return true;
  }

  String arrow() {
    StructType schema = (StructType) child.dataType();
    // no task context: the converter closes its buffers as it ends, here
    ArrowConverters.ArrowBatchWithSchemaIterator batches =
        new ArrowConverters.ArrowBatchWithSchemaIterator(
            JavaConverters.asScalaIterator(kept.iterator()),
            schema,
            limit,
            Long.MAX_VALUE,
            timeZone,
            true,
            null);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      while (batches.hasNext()) {
        byte[] stream = batches.next();
        out.write(stream, 0, stream.length);
      }
    } finally {
      batches.close();
    }
    return Base64.getEncoder().encodeToString(out.toByteArray());
  }

  @Override
  public Object eval(InternalRow input) {
    return keep((InternalRow) child.eval(input));
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode in = child.genCode(ctx);
    String self = ctx.addReferenceObj("headRows", this, HeadRows.class.getName());
    String code =
        in.code().toString()
            + "\nboolean "
            + ev.value()
            + " = "
            + self
            + ".keep("
            + in.isNull()
            + " ? null : (org.apache.spark.sql.catalyst.InternalRow) "
            + in.value()
            + ");";
    return new ExprCode(block(code), FalseLiteral$.MODULE$, ev.value());
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
    return Collections.singletonList(child);
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new HeadRows(children.apply(0), limit, timeZone, payloads);
  }
}
