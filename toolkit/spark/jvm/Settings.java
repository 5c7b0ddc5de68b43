package toolkit.spark.jvm;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.RuntimeConfig;
import org.apache.spark.sql.SparkSession;

/**
 * A session's settings as the toolkit reads and holds them (toolkit/spark/settings.py):
 * each in one round trip from Python where py4j took several.
 */
public final class Settings {
  private Settings() {}

  /** A hash of every setting {@code session} has now. */
  public static int hash(SparkSession session) {
    return session.sessionState().conf().getAllConfs().hashCode();
  }

  /**
   * Sets {@code settings} on {@code conf}, and returns what each was before (null: unset),
   * for {@link #restore}.
   */
  static Map<String, String> set(RuntimeConfig conf, Map<String, String> settings) {
    Map<String, String> before = new HashMap<>();
    for (Map.Entry<String, String> setting : settings.entrySet()) {
      String name = setting.getKey();
      before.put(name, conf.contains(name) ? conf.get(name) : null);
      conf.set(name, setting.getValue());
    }
    return before;
  }

  /** Puts back on {@code conf} the settings {@link #set} changed. */
  static void restore(RuntimeConfig conf, Map<String, String> before) {
    for (Map.Entry<String, String> was : before.entrySet()) {
      if (was.getValue() == null) {
        conf.unset(was.getKey());
      } else {
        conf.set(was.getKey(), was.getValue());
      }
    }
  }
}
