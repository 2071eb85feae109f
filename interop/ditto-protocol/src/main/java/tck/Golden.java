package tck;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.eclipse.ditto.base.model.headers.DittoHeaders;
import org.eclipse.ditto.base.model.signals.Signal;
import org.eclipse.ditto.base.model.signals.commands.exceptions.StreamingSubscriptionProtocolErrorException;
import org.eclipse.ditto.base.model.signals.commands.streaming.CancelStreamingSubscription;
import org.eclipse.ditto.base.model.signals.commands.streaming.RequestFromStreamingSubscription;
import org.eclipse.ditto.base.model.signals.commands.streaming.SubscribeForPersistedEvents;
import org.eclipse.ditto.base.model.signals.events.streaming.StreamingSubscriptionComplete;
import org.eclipse.ditto.base.model.signals.events.streaming.StreamingSubscriptionCreated;
import org.eclipse.ditto.base.model.signals.events.streaming.StreamingSubscriptionFailed;
import org.eclipse.ditto.base.model.signals.events.streaming.StreamingSubscriptionHasNext;
import org.eclipse.ditto.json.JsonArray;
import org.eclipse.ditto.json.JsonFieldSelector;
import org.eclipse.ditto.json.JsonObject;
import org.eclipse.ditto.json.JsonPointer;
import org.eclipse.ditto.policies.model.PolicyId;
import org.eclipse.ditto.protocol.Adaptable;
import org.eclipse.ditto.protocol.ProtocolFactory;
import org.eclipse.ditto.protocol.TopicPath;
import org.eclipse.ditto.protocol.adapter.DittoProtocolAdapter;
import org.eclipse.ditto.things.model.ThingId;
import org.eclipse.ditto.things.model.signals.commands.exceptions.ThingNotAccessibleException;
import org.eclipse.ditto.thingsearch.model.signals.commands.exceptions.InvalidOptionException;
import org.eclipse.ditto.thingsearch.model.signals.commands.exceptions.SubscriptionProtocolErrorException;
import org.eclipse.ditto.thingsearch.model.signals.commands.subscription.CancelSubscription;
import org.eclipse.ditto.thingsearch.model.signals.commands.subscription.CreateSubscription;
import org.eclipse.ditto.thingsearch.model.signals.commands.subscription.RequestFromSubscription;
import org.eclipse.ditto.thingsearch.model.signals.events.SubscriptionComplete;
import org.eclipse.ditto.thingsearch.model.signals.events.SubscriptionCreated;
import org.eclipse.ditto.thingsearch.model.signals.events.SubscriptionFailed;
import org.eclipse.ditto.thingsearch.model.signals.events.SubscriptionHasNextPage;

/**
 * Builds every message of Ditto's streaming-subscription and search protocols with Ditto's own signal
 * classes, turns each into a Ditto Protocol envelope with DittoProtocolAdapter, and writes one envelope
 * per line.  The kit's codec must read each line and write it back JSON-equal.
 * Usage: java -cp ... tck.Golden OUTPUT.jsonl
 */
public final class Golden {

    private static DittoHeaders headers(final String correlationId) {
        return DittoHeaders.newBuilder().correlationId(correlationId).build();
    }

    private static JsonObject event(final long revision) {
        return JsonObject.newBuilder()
                .set("topic", "tck/range/things/twin/events/modified")
                .set("path", "/attributes/counter")
                .set("value", revision)
                .set("revision", revision)
                .build();
    }

    private static JsonObject thing(final int index) {
        return JsonObject.newBuilder()
                .set("thingId", "tck:thing-" + index)
                .set("attributes", JsonObject.newBuilder().set("tck", 3).build())
                .build();
    }

    private static List<Signal<?>> streaming() {
        final ThingId range = ThingId.of("tck", "range");
        final JsonPointer root = JsonPointer.empty();
        final String id = "0";
        final List<Signal<?>> signals = new ArrayList<>();
        signals.add(SubscribeForPersistedEvents.of(range, root, 5L, 7L, headers("s-1")));
        signals.add(SubscribeForPersistedEvents.of(ThingId.of("tck", "infinite"), root, 1L, 0L,
                "and(eq(topic:action,'modified'),exists(value))", headers("s-2")));
        signals.add(SubscribeForPersistedEvents.of(range, root,
                Instant.parse("2026-01-01T00:00:00Z"), Instant.parse("2026-01-02T12:30:00Z"), headers("s-3")));
        signals.add(SubscribeForPersistedEvents.of(PolicyId.of("tck", "policy"), root, 1L, 2L, headers("s-4")));
        signals.add(RequestFromStreamingSubscription.of(range, root, id, 3L, headers("s-5")));
        signals.add(RequestFromStreamingSubscription.of(range, root, id, Long.MAX_VALUE, headers("s-6")));
        signals.add(CancelStreamingSubscription.of(range, root, id, headers("s-7")));
        signals.add(StreamingSubscriptionCreated.of(id, range, headers("s-1")));
        signals.add(StreamingSubscriptionHasNext.of(id, range, event(5), headers("s-5")));
        signals.add(StreamingSubscriptionComplete.of(id, range, headers("s-5")));
        signals.add(RequestFromStreamingSubscription.of(range, root, id, 0L, headers("s-9")));
        final ThingId missing = ThingId.of("tck", "missing");
        signals.add(StreamingSubscriptionFailed.of(id, missing,
                ThingNotAccessibleException.newBuilder(missing).dittoHeaders(headers("s-10")).build(),
                headers("s-10")));
        signals.add(StreamingSubscriptionFailed.of(id, range,
                StreamingSubscriptionProtocolErrorException.newBuilder()
                        .message("The demand must be positive.")
                        .description("Request a positive number of items.")
                        .dittoHeaders(headers("s-8"))
                        .build(),
                headers("s-8")));
        signals.add(StreamingSubscriptionCreated.of("1", PolicyId.of("tck", "policy"), headers("s-4")));
        return signals;
    }

    private static List<Signal<?>> search() {
        final String id = "search-0";
        final Set<String> namespaces = new LinkedHashSet<>(List.of("tck", "org.eclipse.ditto"));
        final JsonArray page = JsonArray.newBuilder().add(thing(0)).add(thing(1)).build();
        final List<Signal<?>> signals = new ArrayList<>();
        signals.add(CreateSubscription.of("eq(attributes/tck,3)", "size(2),sort(+thingId)",
                JsonFieldSelector.newInstance("thingId", "attributes"), namespaces, headers("q-1")));
        signals.add(CreateSubscription.of(headers("q-2")));
        signals.add(RequestFromSubscription.of(id, 2L, headers("q-3")));
        signals.add(CancelSubscription.of(id, headers("q-4")));
        signals.add(SubscriptionCreated.of(id, headers("q-1")));
        signals.add(SubscriptionHasNextPage.of(id, page, headers("q-3")));
        signals.add(SubscriptionHasNextPage.of(id, JsonArray.empty(), headers("q-3")));
        signals.add(SubscriptionComplete.of(id, headers("q-3")));
        signals.add(RequestFromSubscription.of(id, -1L, headers("q-6")));
        signals.add(SubscriptionFailed.of(id,
                InvalidOptionException.newBuilder().message("size(0) is not a page size.")
                        .dittoHeaders(headers("q-7")).build(),
                headers("q-7")));
        signals.add(SubscriptionFailed.of(id,
                SubscriptionProtocolErrorException.newBuilder()
                        .message("The demand must be positive.")
                        .dittoHeaders(headers("q-5"))
                        .build(),
                headers("q-5")));
        return signals;
    }

    public static void main(final String[] args) throws Exception {
        final DittoProtocolAdapter adapter = DittoProtocolAdapter.newInstance();
        final List<Signal<?>> signals = new ArrayList<>(streaming());
        signals.addAll(search());
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[0]), StandardCharsets.UTF_8))) {
            for (final Signal<?> signal : signals) {
                // Ditto's default channel for a streaming command is twin, which its own topic builder rejects
                // for policies (3.5.0 and 3.8.0): a policy's topic has no channel, so ask for none.
                final boolean policy = signal.getResourceType().equals("policy");
                final Adaptable adaptable = policy ? adapter.toAdaptable(signal, TopicPath.Channel.NONE)
                        : adapter.toAdaptable(signal);
                out.print(ProtocolFactory.wrapAsJsonifiableAdaptable(adaptable).toJsonString());
                out.print('\n');
            }
        }
    }
}
