-- Ditto Protocol streaming subscriptions and search, labelled for Wireshark (rsio-tck, issue 18).
--
-- Theory of operation.  Wireshark's WebSocket dissector already finds Ditto's /ws/2 (by the HTTP
-- Upgrade, on any port) and shows each text message; its JSON dissector can show the envelope.  This
-- dissector only labels what matters to the Reactive Streams contract: the signal (subscribe,
-- request, cancel, created, next, complete, failed), the profile (streaming or search), the
-- subscriptionId, the demand and the correlation-id.  It reads the envelope's "topic" (the signal is
-- its last segment, the profile the one before), "headers"."correlation-id" and the "value" fields
-- "subscriptionId" and "demand" with Lua patterns: a label, not a validating parser (the kit's codec
-- judges the JSON; an envelope these patterns cannot read is shown as such, never as a Lua error).
--
-- Transports: a WebSocket text message is one envelope (the "ws" heuristic list: every message's
-- unmasked payload); on TCP (the kit's reference peer, one JSON text per line) a heuristic takes a
-- stream whose first bytes open a JSON object, and each line is labelled, lines split across
-- segments reassembled by TCP desegmentation, several lines per segment each shown.

local ditto = Proto("ditto", "Ditto Reactive Streams")

local hf = {
    signal = ProtoField.string("ditto.signal", "Signal"),
    action = ProtoField.string("ditto.action", "Topic action"),
    profile = ProtoField.string("ditto.profile", "Profile"),
    topic = ProtoField.string("ditto.topic", "Topic"),
    correlation = ProtoField.string("ditto.correlation_id", "correlation-id"),
    subscription = ProtoField.string("ditto.subscription_id", "subscriptionId"),
    demand = ProtoField.int64("ditto.demand", "Demand", base.DEC),
    items = ProtoField.uint32("ditto.items", "Items in the page", base.DEC),
    error = ProtoField.string("ditto.error", "Error code"),
    unlabelled = ProtoField.string("ditto.unlabelled", "Not a Ditto streaming/search envelope"),
}
ditto.fields = hf

local MAX_LINE = 1024 * 1024 -- bytes of one TCP line at most (the kit's DittoLimits.max_message)

-- The Reactive Streams signal of a topic's last segment.
local SIGNALS = {
    subscribeForPersistedEvents = "subscribe", subscribe = "subscribe", request = "request", cancel = "cancel",
    created = "created", next = "next", complete = "complete", failed = "failed",
}

local function string_field(text, name)
    return text:match('"' .. name .. '"%s*:%s*"([^"]*)"')
end

-- What the labels need from one envelope, or nil when it is not a streaming/search envelope.
local function read_envelope(text)
    local topic = string_field(text, "topic")
    if topic == nil then return nil end
    local parts = {}
    for part in topic:gmatch("[^/]+") do parts[#parts + 1] = part end
    local action = parts[#parts]
    local profile = parts[#parts - 1]
    if profile ~= "streaming" and profile ~= "search" then return nil end
    local e = { topic = topic, action = action, profile = profile, signal = SIGNALS[action] or action }
    e.correlation = string_field(text, "correlation%-id")
    e.subscription = string_field(text, "subscriptionId")
    local demand = text:match('"demand"%s*:%s*(%-?%d+)')
    if demand then e.demand = demand end
    e.error = string_field(text, "error")
    local items = text:match('"items"%s*:%s*(%b[])')
    if items then
        local count = 0
        if items:match("^%[%s*%]$") == nil then
            local depth, i = 0, 2
            count = 1
            while i < #items do
                local c = items:sub(i, i)
                if c == '"' then
                    local j = i + 1
                    while j < #items and items:sub(j, j) ~= '"' do
                        if items:sub(j, j) == "\\" then j = j + 1 end
                        j = j + 1
                    end
                    i = j
                elseif c == "{" or c == "[" then depth = depth + 1
                elseif c == "}" or c == "]" then depth = depth - 1
                elseif c == "," and depth == 0 then count = count + 1 end
                i = i + 1
            end
        end
        e.items = count
    end
    return e
end

local function summary(e)
    local words = { e.signal }
    if e.subscription then words[#words + 1] = "sub=" .. e.subscription end
    if e.demand then words[#words + 1] = "demand=" .. e.demand end
    if e.items then words[#words + 1] = "items=" .. e.items end
    if e.signal == "subscribe" and e.correlation then words[#words + 1] = "cid=" .. e.correlation end
    if e.error then words[#words + 1] = e.error end
    return table.concat(words, " ")
end

-- A JSON integer as an Int64 (digit by digit: a Lua number loses precision beyond 2^53), or nil
-- beyond the signed 64-bit range.
local function decimal_int64(text)
    local negative, digits = text:match("^(%-?)(%d+)$")
    if digits == nil then return nil end
    digits = digits:gsub("^0+(%d)", "%1")
    local max = "9223372036854775807"
    if #digits > #max or (#digits == #max and digits > max and not (negative == "-" and digits == "9223372036854775808")) then
        return nil
    end
    local value = Int64(0)
    for i = 1, #digits do
        local d = Int64(tonumber(digits:sub(i, i)))
        value = negative == "-" and value * 10 - d or value * 10 + d
    end
    return value
end

-- Label one envelope (tvb range `range`, text `text`); returns its summary.
local function label(tree, range, text)
    local e = read_envelope(text)
    if e == nil then
        tree:add(ditto, range, "Ditto: not a streaming/search envelope"):add(hf.unlabelled, range, text:sub(1, 80))
        return nil
    end
    local node = tree:add(ditto, range, "Ditto " .. e.profile .. ": " .. summary(e))
    node:add(hf.signal, range, e.signal)
    node:add(hf.action, range, e.action)
    node:add(hf.profile, range, e.profile)
    node:add(hf.topic, range, e.topic)
    if e.correlation then node:add(hf.correlation, range, e.correlation) end
    if e.subscription then node:add(hf.subscription, range, e.subscription) end
    if e.demand then
        local value = decimal_int64(e.demand)
        if value then node:add(hf.demand, range, value) else node:add(range, "Demand: " .. e.demand .. " (beyond 64 bits)") end
    end
    if e.items then node:add(hf.items, range, e.items) end
    if e.error then node:add(hf.error, range, e.error) end
    return summary(e)
end

local function set_info(pinfo, labels)
    if #labels == 0 then return end
    pinfo.cols.protocol = "Ditto"
    pinfo.cols.info:append(" " .. table.concat(labels, "; "))
end

-- WebSocket: one envelope per text message ---------------------------------------------------------

local function ws_heuristic(tvb, pinfo, tree)
    local size = tvb:captured_len()
    if size < 2 then return false end
    local text = tvb:raw(0, size)
    if not text:match("^%s*{") or not text:find('"topic"', 1, true) then return false end
    local shown = label(tree, tvb(0, size), text)
    set_info(pinfo, { shown or "[not a streaming/search envelope]" })
    return true
end

ditto:register_heuristic("ws", ws_heuristic)

-- TCP: one JSON text per line -------------------------------------------------------------------

local function dissect_lines(tvb, pinfo, tree)
    local limit = tvb:captured_len()
    local raw = tvb:raw(0, limit)
    local at, labels = 0, {}
    while at < limit do
        local stop = raw:find("\n", at + 1, true)
        if stop == nil then
            if limit - at > MAX_LINE then
                tree:add(ditto, tvb(at, limit - at), "Ditto: line longer than " .. MAX_LINE .. " bytes (not labelled)")
                break
            end
            if pinfo.can_desegment > 0 then
                pinfo.desegment_offset, pinfo.desegment_len = at, DESEGMENT_ONE_MORE_SEGMENT
                break
            end
            tree:add(ditto, tvb(at, limit - at), "Ditto: line continues beyond this segment")
            break
        end
        local length = stop - at -- with its LF
        local shown = label(tree, tvb(at, length), raw:sub(at + 1, stop - 1))
        labels[#labels + 1] = shown or "[not a streaming/search envelope]"
        at = stop
    end
    set_info(pinfo, labels)
    return limit
end

ditto.dissector = dissect_lines

-- The first bytes of an envelope as Ditto and the kit write them: a first segment shorter than these (a
-- line written a few bytes at a time) is claimed tentatively and TCP is asked for the next segment, so
-- the heuristic sees enough of the line to decide.
local ENVELOPE_STARTS = { '{"topic"', '{"headers"' }

local function tcp_heuristic(tvb, pinfo, tree)
    local size = math.min(tvb:captured_len(), 64)
    if size < 9 then
        local start = tvb:raw(0, size)
        for _, prefix in ipairs(ENVELOPE_STARTS) do
            if size > 0 and prefix:sub(1, size) == start and pinfo.can_desegment > 0 then
                pinfo.desegment_offset, pinfo.desegment_len = 0, DESEGMENT_ONE_MORE_SEGMENT
                return true
            end
        end
        return false
    end
    local start = tvb:raw(0, size)
    if not start:match('^%s*{%s*"[%w%-]+"%s*:') then return false end
    if not (start:find('"topic"', 1, true) or start:find('"headers"', 1, true)) then return false end
    pinfo.conversation = ditto
    dissect_lines(tvb, pinfo, tree)
    return true
end

ditto:register_heuristic("tcp", tcp_heuristic)
DissectorTable.get("tcp.port"):add_for_decode_as(ditto)
