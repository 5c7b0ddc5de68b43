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
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedStar;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.Except;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Intersect;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import scala.collection.JavaConverters;
import scala.collection.Seq;
import scala.runtime.AbstractFunction1;

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
 * name that does not resolve. A step on a resolved plan binds the names it takes from it
 * as it is made, as the analysis would: the analysis then resolved the steps one after
 * another, a walk of the whole plan each time, some 2 ms a batch of typed columns.
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
    Map<String, Attribute> names = names(child);
    List<NamedExpression> named = new ArrayList<>(columns.length);
    for (Column c : columns) {
      NamedExpression e = c.named();
      if (names != null && e instanceof UnresolvedStar
          && ((UnresolvedStar) e).target().isEmpty()) {
        named.addAll(JavaConverters.seqAsJavaList(child.output()));
      } else {
        named.add((NamedExpression) bound((Expression) (Object) e, names));
      }
    }
    return new Project(JavaConverters.asScalaBuffer(named).toList(), child);
  }

  /** {@code child}'s rows for which {@code condition} holds. */
  public static LogicalPlan where(LogicalPlan child, Column condition) {
    return new Filter(bound(condition.expr(), names(child)), child);
  }

  /**
   * The columns of a resolved {@code child} by name, those a reference by name resolves to
   * one column whether Spark compares names with case or without (two names alike but for
   * case are left out); null when {@code child} is not resolved.
   */
  private static Map<String, Attribute> names(LogicalPlan child) {
    if (!child.resolved()) {
      return null;
    }
    Map<String, Attribute> byName = new HashMap<>();
    Map<String, Integer> folded = new HashMap<>();
    for (Attribute a : JavaConverters.seqAsJavaList(child.output())) {
      byName.put(a.name(), a);
      folded.merge(a.name().toLowerCase(java.util.Locale.ROOT), 1, Integer::sum);
    }
    byName.keySet().removeIf(n -> folded.get(n.toLowerCase(java.util.Locale.ROOT)) != 1);
    return byName;
  }

  /**
   * {@code e} with each reference by one name to a column of {@code names} replaced by
   * that column, as Spark's analysis would resolve it: each step stacked on a resolved plan
   * is then resolved as it is made, and the analysis of the whole stack has less to do
   * (it resolved the steps one after another, a walk of the whole plan each time).
   */
  private static Expression bound(Expression e, Map<String, Attribute> names) {
    if (names == null) {
      return e;
    }
    if (e instanceof UnresolvedAttribute) {
      Seq<String> parts = ((UnresolvedAttribute) e).nameParts();
      Attribute found = parts.size() == 1 ? names.get(parts.head()) : null;
      return found == null ? e : found;
    }
    if (e.children().isEmpty()) {
      return e;
    }
    return e.mapChildren(
        new AbstractFunction1<Expression, Expression>() {
          @Override
          public Expression apply(Expression child) {
            return bound(child, names);
          }
        });
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
    Map<String, String> before = Settings.set(conf, held);
    try {
      // the writer takes its Dataset's plan as given to it, and the write's analysis would
      // walk the whole stack again: it is given the plan analysed, which it skips
      LogicalPlan analyzed = Dataset.ofRows(session, plan).queryExecution().analyzed();
      Dataset.ofRows(session, analyzed).writeTo(table).options(written).append();
    } finally {
      Settings.restore(conf, before);
    }
  }

  /**
   * Whether Spark's optimizer could infer anything from {@code plan}'s constraints: a join
   * (an intersection, a difference or a subquery may become one), or a filter other than
   * the toolkit's own (the count of jvm/ClassTally.java: a column that is always true,
   * which yields no constraint). A plan without either is written with the inference off,
   * unless the session sets it: it would find nothing, and looking cost the optimizer 2-3
   * ms a batch of typed columns on two cores.
   */
  public static boolean inferable(LogicalPlan plan) {
    if (plan instanceof Join || plan instanceof Intersect || plan instanceof Except) {
      return true;
    }
    for (Expression e : JavaConverters.seqAsJavaList(plan.expressions())) {
      if (SubqueryExpression.hasSubquery(e)) {
        return true; // a subquery may become a join
      }
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
