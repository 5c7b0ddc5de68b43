package toolkit.spark.jvm;

import java.lang.reflect.Field;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import py4j.DefaultGatewayServerListener;
import py4j.GatewayServer;
import py4j.GatewayServerListener;
import py4j.Py4JServerConnection;

/**
 * Makes the JVM send its answers to Python at once (TCP_NODELAY on py4j's connections).
 *
 * <p>py4j writes an answer through an 8,192-character buffer. An answer longer than that
 * goes out in two writes, and the kernel holds the second one back until Python's side
 * acknowledges the first (Nagle's algorithm), which Python's side does only after its
 * delayed-acknowledgement timer, 40 ms on Linux: every answer over 8 KB (a wide schema's
 * JSON, a tally's payloads) took 44 ms where one under it takes under 1 ms. Measured in
 * toolkit/spark/tally.py's doc.
 */
public final class Sockets {
  private Sockets() {}

  /**
   * Sets TCP_NODELAY on every connection of {@code server} (py4j's gateway server, the
   * Python side's {@code gateway.java_gateway_server}) and on every connection it accepts
   * from now on; what a second call finds done it leaves. Returns how many connections it
   * changed, or -1 when {@code server} is not a py4j gateway server.
   */
  public static int noDelay(Object server) {
    if (!(server instanceof GatewayServer)) {
      return -1;
    }
    GatewayServer gateway = (GatewayServer) server;
    synchronized (Sockets.class) {
      boolean listening = false;
      for (GatewayServerListener listener : gateway.getListeners()) {
        listening |= listener instanceof NoDelay;
      }
      if (!listening) {
        gateway.addListener(new NoDelay());
      }
    }
    int changed = 0;
    for (Py4JServerConnection connection : connections(gateway)) {
      changed += set(connection) ? 1 : 0;
    }
    return changed;
  }

  /** How many connections of {@code server} open now still hold their answers back. */
  public static int delayed(Object server) throws SocketException {
    int found = 0;
    for (Py4JServerConnection connection : connections((GatewayServer) server)) {
      Socket socket = connection.getSocket();
      found += socket != null && !socket.isClosed() && !socket.getTcpNoDelay() ? 1 : 0;
    }
    return found;
  }

  /** The connections open now (py4j keeps them in a private list). */
  @SuppressWarnings("unchecked")
  private static List<Py4JServerConnection> connections(GatewayServer gateway) {
    try {
      Field field = GatewayServer.class.getDeclaredField("connections");
      field.setAccessible(true);
      List<Py4JServerConnection> list = (List<Py4JServerConnection>) field.get(gateway);
      synchronized (list) {
        return new ArrayList<>(list);
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      return new ArrayList<>(); // another py4j: the connections made from now on only
    }
  }

  private static boolean set(Py4JServerConnection connection) {
    Socket socket = connection.getSocket();
    try {
      if (socket == null || socket.getTcpNoDelay()) {
        return false;
      }
      socket.setTcpNoDelay(true);
      return true;
    } catch (SocketException e) {
      return false; // a connection closing meanwhile
    }
  }

  static final class NoDelay extends DefaultGatewayServerListener {
    @Override
    public void connectionStarted(Py4JServerConnection connection) {
      set(connection);
    }
  }
}
