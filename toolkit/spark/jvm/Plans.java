package toolkit.spark.jvm;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RuntimeConfig;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Except;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Intersect;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import scala.collection.JavaConverters;

/**
 * Projections and filters stacked on a DataFrame's plan without Spark analysing each one
 * (toolkit/spark/plans.py).
 *
 * <p>Every {@code select} or {@code where} of a Dataset is analysed as it is made, and the
 * analysis walks the whole plan below it: about 8 ms for a plain projection on two cores,
 * more the deeper the plan. A batch of typed columns takes four of them before its write
 * (positional names, class codes, the count, the routing), 40 ms in all, where the same
 * plan analysed once, when it becomes a Dataset, takes 14 ms. The steps here only build
 * the logical plan; {@link #frame} analyses it, once, and fails as a Dataset would on a
 * name that does not resolve.
 *
 * <p>{@link #append} writes such a plan in the session that writes it, analysing it there
 * only: a write of its own session (toolkit/spark/settings.py) would otherwise analyse it
 * twice, once where it was made and once more in its own session.
 */
public final class Plans {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<Map<String, String>> STRINGS =
      new TypeReference<Map<String, String>>() {};
  /** Spark's setting of the inference of constraints ({@link #inferable}). */
  private static final String CONSTRAINTS = "spark.sql.constraintPropagation.enabled";

  private Plans() {}

  /** {@code frame}'s analysed plan with its columns renamed by position ({@link #positional}). */
  public static LogicalPlan positional(Dataset<Row> frame) {
    return positional(frame.queryExecution().analyzed());
  }

  /** A hash of every setting {@code session} has now (one round trip from Python). */
  public static int settingsHash(SparkSession session) {
    return session.sessionState().conf().getAllConfs().hashCode();
  }

  /** {@code child}'s output columns renamed {@code c0}, {@code c1}... by position. */
  public static LogicalPlan positional(LogicalPlan child) {
    List<Attribute> output = JavaConverters.seqAsJavaList(child.output());
    Column[] columns = new Column[output.size()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = new Column(output.get(i)).as("c" + i);
    }
    return select(child, columns);
  }

  /** {@code columns} of {@code child}'s rows, as {@code Dataset.select} would make them. */
  public static LogicalPlan select(LogicalPlan child, Column[] columns) {
    List<NamedExpression> named = new ArrayList<>(columns.length);
    for (Column c : columns) {
      named.add(c.named());
    }
    return new Project(JavaConverters.asScalaBuffer(named).toList(), child);
  }

  /** {@code child}'s rows for which {@code condition} holds. */
  public static LogicalPlan where(LogicalPlan child, Column condition) {
    return new Filter(condition.expr(), child);
  }

  /** {@code plan} analysed, as a Dataset of {@code session}. */
  public static Dataset<Row> frame(SparkSession session, LogicalPlan plan) {
    return Dataset.ofRows(session, plan);
  }

  /**
   * Appends {@code plan}'s rows to {@code table} (Spark's name of it) with the write
   * options {@code options}, and {@code settings} set on {@code session} for the write
   * alone (both JSON objects of texts): the plan analysed once, in {@code session},
   * failing as a Dataset would, and one round trip from Python where a Dataset, its
   * writer and the settings took several.
   */
  public static void append(
      SparkSession session, LogicalPlan plan, String table, String options, String settings)
      throws IOException, NoSuchTableException {
    Map<String, String> written = JSON.readValue(options, STRINGS);
    Map<String, String> held = new HashMap<>(JSON.readValue(settings, STRINGS));
    RuntimeConfig conf = session.conf();
    if (!conf.contains(CONSTRAINTS) && !inferable(plan)) {
      held.put(CONSTRAINTS, "false");
    }
    Map<String, String> before = new HashMap<>();
    for (Map.Entry<String, String> setting : held.entrySet()) {
      before.put(setting.getKey(), conf.contains(setting.getKey())
          ? conf.get(setting.getKey()) : null);
      conf.set(setting.getKey(), setting.getValue());
    }
    try {
      Dataset.ofRows(session, plan).writeTo(table).options(written).append();
    } finally {
      for (Map.Entry<String, String> was : before.entrySet()) {
        if (was.getValue() == null) {
          conf.unset(was.getKey());
        } else {
          conf.set(was.getKey(), was.getValue());
        }
      }
    }
  }

  /**
   * Whether Spark's optimizer could infer anything from {@code plan}'s constraints: a join
   * (an intersection or a difference becomes one), or a filter other than the toolkit's
   * own (the count of jvm/ClassTally.java: a column that is always true, which yields no
   * constraint). A plan without either is written with the inference off, unless the
   * session sets it: it would find nothing, and looking cost the optimizer 2-3 ms a batch
   * of typed columns on two cores.
   */
  public static boolean inferable(LogicalPlan plan) {
    if (plan instanceof Join || plan instanceof Intersect || plan instanceof Except) {
      return true;
    }
    if (plan instanceof Filter) {
      Expression condition = ((Filter) plan).condition();
      if (!(condition instanceof NamedExpression
          && ClassTally.COLUMN.equals(((NamedExpression) condition).name()))) {
        return true;
      }
    }
    for (LogicalPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      if (inferable(child)) {
        return true;
      }
    }
    return false;
  }
}
