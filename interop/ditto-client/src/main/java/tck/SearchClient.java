package tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.eclipse.ditto.client.DittoClient;
import org.eclipse.ditto.client.DittoClients;
import org.eclipse.ditto.client.configuration.BasicAuthenticationConfiguration;
import org.eclipse.ditto.client.configuration.WebSocketMessagingConfiguration;
import org.eclipse.ditto.client.messaging.AuthenticationProviders;
import org.eclipse.ditto.client.messaging.MessagingProvider;
import org.eclipse.ditto.client.messaging.MessagingProviders;
import org.eclipse.ditto.things.model.Thing;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A search subscription of Eclipse Ditto's Java client (ditto-client 2.4.0) against a Ditto WebSocket endpoint.
 * RSIO_URL is the endpoint (ws://HOST:PORT/ws/2), RSIO_TESTCASE the case (interop/ditto-client/README.md).
 * Prints one line per signal ("next tck:thing-0 tck:thing-1", "complete", "error CODE"); exits 0 when the case
 * went as expected, 1 when not, 127 for a case it does not support.
 */
public final class SearchClient {

    private static final long WAIT_SECONDS = 20;

    /** What one search subscription saw; the pages are requested one at a time, or all at once. */
    private static final class Pages implements Subscriber<List<Thing>> {
        final List<List<String>> pages = new ArrayList<>();
        final CompletableFuture<String> end = new CompletableFuture<>();
        final long initial;
        final int cancelAfter; // pages; 0: never cancel
        Subscription subscription;

        Pages(final long initial, final int cancelAfter) {
            this.initial = initial;
            this.cancelAfter = cancelAfter;
        }

        @Override public void onSubscribe(final Subscription s) {
            subscription = s;
            s.request(initial);
        }

        @Override public void onNext(final List<Thing> things) {
            final List<String> ids = things.stream()
                    .map(t -> t.getEntityId().map(Object::toString).orElse("?")).collect(Collectors.toList());
            pages.add(ids);
            System.out.println("next " + String.join(" ", ids));
            if (cancelAfter > 0 && pages.size() == cancelAfter) {
                subscription.cancel();
                System.out.println("cancel");
                end.complete("cancelled");
            } else if (initial == 1) {
                subscription.request(1);
            }
        }

        @Override public void onError(final Throwable error) {
            System.out.println("error " + error.getClass().getSimpleName() + ": " + error.getMessage());
            end.complete("error");
        }

        @Override public void onComplete() {
            System.out.println("complete");
            end.complete("complete");
        }

        List<String> things() {
            return pages.stream().flatMap(List::stream).collect(Collectors.toList());
        }
    }

    /** The collection in Ditto's default order, sort(+thingId): thingIds as strings (tck:thing-10 before -2). */
    private static List<String> expected(final int count) {
        final List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add("tck:thing-" + i);
        }
        Collections.sort(ids);
        return ids;
    }

    /** Pages of 1 to size things (size limits a page; fewer is legal) holding the collection in order. */
    private static boolean pagesOf(final Pages seen, final int total, final int size) {
        for (final List<String> page : seen.pages) {
            if (page.isEmpty() || page.size() > size) {
                return false;
            }
        }
        return seen.things().equals(expected(total));
    }

    private static Pages search(final DittoClient client, final String filter, final int size, final long initial,
            final int cancelAfter) throws Exception {
        final Publisher<List<Thing>> publisher = client.twin().search()
                .publisher(q -> q.filter(filter).options("size(" + size + ")"));
        final Pages seen = new Pages(initial, cancelAfter);
        publisher.subscribe(seen);
        seen.end.get(WAIT_SECONDS, TimeUnit.SECONDS);
        return seen;
    }

    private static boolean run(final DittoClient client, final String testcase) throws Exception {
        switch (testcase) {
            case "search-pages": { // request(1) per page: 10 things in pages of 3, then complete
                final Pages seen = search(client, "eq(attributes/tck,10)", 3, 1, 0);
                return "complete".equals(seen.end.get()) && seen.pages.size() >= 4 && pagesOf(seen, 10, 3);
            }
            case "search-all": { // one request for every page at once
                final Pages seen = search(client, "eq(attributes/tck,12)", 5, Long.MAX_VALUE, 0);
                return "complete".equals(seen.end.get()) && pagesOf(seen, 12, 5);
            }
            case "search-stream": { // the client's own java.util.stream (2 pages ahead, then 1 at a time)
                final List<String> ids = client.twin().search()
                        .stream(q -> q.filter("eq(attributes/tck,7)").options(o -> o.size(2)))
                        .map(t -> t.getEntityId().map(Object::toString).orElse("?")).collect(Collectors.toList());
                System.out.println("next " + String.join(" ", ids));
                System.out.println("complete");
                return ids.equals(expected(7));
            }
            case "search-cancel": { // cancel after the second page of a large result
                final Pages seen = search(client, "eq(attributes/tck,100)", 5, 1, 2);
                final List<String> things = seen.things(); // two pages: at most 10 things, the first in order
                return "cancelled".equals(seen.end.get()) && seen.pages.size() == 2 && things.size() <= 10
                        && things.equals(expected(100).subList(0, things.size()));
            }
            case "search-empty": { // no thing matches: complete without a page
                final Pages seen = search(client, "eq(attributes/tck,0)", 5, 1, 0);
                return "complete".equals(seen.end.get()) && seen.pages.isEmpty();
            }
            case "search-failed": { // an option the endpoint rejects (size 0): failed after the first request
                final Pages seen = search(client, "eq(attributes/tck,3)", 0, 1, 0);
                return "error".equals(seen.end.get()) && seen.pages.isEmpty();
            }
            default:
                return false;
        }
    }

    private static final List<String> CASES = List.of("search-pages", "search-all", "search-stream",
            "search-cancel", "search-empty", "search-failed");

    public static void main(final String[] args) throws Exception {
        final String url = System.getenv("RSIO_URL");
        final String testcase = System.getenv("RSIO_TESTCASE");
        if (testcase == null || !CASES.contains(testcase)) {
            System.out.println("unsupported test case " + testcase);
            System.exit(127);
        }
        final MessagingProvider messaging = MessagingProviders.webSocket(WebSocketMessagingConfiguration.newBuilder()
                        .endpoint(url).reconnectEnabled(false).initialConnectRetryEnabled(false)
                        .timeout(Duration.ofSeconds(WAIT_SECONDS)).build(),
                AuthenticationProviders.basic(BasicAuthenticationConfiguration.newBuilder()
                        .username("tck").password("tck").build()));
        int code = 1;
        final DittoClient client = DittoClients.newInstance(messaging).connect().toCompletableFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        try {
            code = run(client, testcase) ? 0 : 1;
        } catch (final Exception e) {
            System.out.println("failed: " + e);
        } finally {
            client.destroy();
        }
        System.exit(code);
    }
}
