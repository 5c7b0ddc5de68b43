package toolkit.spark.jvm;

import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * What the toolkit's Catalyst expressions written in Java share ({@link ClassCode}, {@link
 * ClassTally}, {@link HeadRows}): their children as the one list Spark's tree sees (a Scala
 * case class would derive the product from its fields), and their generated code as one
 * block of Java text.
 */
abstract class JvmExpression extends Expression implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** The expression's children, in order: all that Spark's tree walks. */
  abstract List<Expression> inputs();

  @Override
  public final Seq<Expression> children() {
    return JavaConverters.asScalaBuffer(inputs()).toList();
  }

  @Override
  public final int productArity() {
    return inputs().size();
  }

  @Override
  public final Object productElement(int n) {
    return inputs().get(n);
  }

  @Override
  public final boolean canEqual(Object that) {
    return that != null && that.getClass() == getClass();
  }

  /** Generated Java statements as Spark's code block (no inlined values). */
  static CodeBlock block(String code) {
    List<JavaCode> none = Collections.emptyList();
    return new CodeBlock(
        JavaConverters.asScalaBuffer(Collections.singletonList(code)).toList(),
        JavaConverters.asScalaBuffer(none).toList());
  }
}
