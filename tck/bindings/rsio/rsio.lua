-- rsio.lua: Wireshark dissector for RS-IO version 0 (Reactive Streams over a byte stream).
-- Shipped with rsio-tck: `rsio-tck wireshark install`, or `tshark -X lua_script:$(rsio-tck wireshark path rsio)`.
--
-- Theory of operation.  RS-IO frames carry no length: a frame ends where its type's last field
-- ends (rsio-v0 section 1), so the only way to find a frame's end is to parse it.  `parse_frame`
-- reads one frame from a Lua string of the bytes at hand and returns it (each field with its
-- offset and length), or raises INCOMPLETE (with how far the frame is known to reach, when known)
-- or MALFORMED (the rule broken, as numbered in the kit's SPEC.md, and the reason).  The two codecs
-- share the frame layouts and differ only in how an integer, a string or byte array length and an
-- array count are read: the `MSGPACK` and `VARINT` readers.  The dissector parses a TCP payload
-- frame by frame; when the last frame is incomplete it asks TCP for the missing bytes
-- (pinfo.desegment_offset / desegment_len), so TCP reassembly joins frames split across segments,
-- and one segment may carry many frames.
--
-- Fixed-size onNext and onNextPacked carry no length either: their size is the elementSize of the
-- onSubscribe that opened the stream, in the same direction.  Each direction of each TCP stream
-- keeps the elementSizes it has seen (forgotten on onComplete, onError or elementSize 0, as the
-- kit's decoder does).  That state is built on the first, in-order pass.  Each fixed-size frame
-- records the size it was read with, keyed by its place in the capture, so later dissections of
-- the same packet (a click in the GUI, tshark -2) read it the same way.  After a malformed frame
-- nothing more of that direction can be framed: the rest is shown as not decoded, as the kit's
-- decoder stops there too.
--
-- Limits are the kit's default receiver limits (tck/wire/limits.py): a length over one is
-- malformed (ERR-8) as soon as its header is read, instead of waiting for gigabytes that never come.
--
-- Recognition: the TCP port preference (default 7878), Decode As, and a heuristic that accepts a
-- TCP stream whose first bytes in a direction are a clientHello or serverHello (or the start of
-- one), then binds the conversation to this dissector.  In a single pass (tshark without -2),
-- bytes a peer sent before the first hello of its stream are seen only through the port
-- preference or Decode As.  The codec preference is auto (from the first hello of each stream,
-- else from the first frames; see sniffed_codec), msgpack or varint.

local rsio = Proto("rsio", "RS-IO (Reactive Streams IO)")

-- Receiver limits of the kit (tck/wire/limits.py, DEFAULT_LIMITS); a test checks they match.
local MAX_ELEMENT = 16 * 1024 * 1024
local MAX_STRING = 64 * 1024
local MAX_ARRAY = 1024
local MAX_ELEMENT_SIZE = 1024 * 1024
local MAX_FRAME = 64 * 1024 * 1024

local DEFAULT_PORT = 7878
local ID_MAX = UInt64(0xffffffff, 0x7fffffff) -- 2^63-1: the largest Id, and unbounded demand

-- Field kinds, as in the kit's codecs.
local ID, LONG, UINT, ESIZE, COUNT, STR, BIN, IDS = "Id", "Long", "int", "elementSize", "count", "String", "Bytes", "Array[Id]"

-- Per type code: the message name and its fields in wire order as {name, kind}.  The element of
-- onNext and the data of onNextPacked are raw bytes in fixed-size mode (no length on the wire).
local LAYOUT = {
    [0x01] = { "clientHello", { "version", UINT }, { "extensions", IDS } },
    [0x02] = { "serverHello", { "version", UINT }, { "extensions", IDS } },
    [0x03] = { "goodbye", { "reason", STR } },
    [0x04] = { "subscribe", { "publisher", STR }, { "subscriber", ID }, { "initial_demand", LONG } },
    [0x05] = { "request", { "subscriber", ID }, { "demand", LONG } },
    [0x06] = { "cancel", { "subscriber", ID } },
    [0x07] = { "onSubscribe", { "subscriber", ID }, { "element_size", ESIZE } },
    [0x08] = { "onNext", { "subscriber", ID }, { "element", BIN } },
    [0x09] = { "onComplete", { "subscriber", ID } },
    [0x0A] = { "onError", { "subscriber", ID }, { "error", STR } },
    [0x0B] = { "onNextPacked", { "subscriber", ID }, { "count", COUNT }, { "data", BIN } },
    [0x0C] = { "onNextPart", { "subscriber", ID }, { "element_id", ID }, { "data", BIN } },
    [0x0D] = { "onNextLastPart", { "subscriber", ID }, { "element_id", ID }, { "data", BIN } },
}

-- Fields ----------------------------------------------------------------------------------------

local type_names = {}
for code, layout in pairs(LAYOUT) do type_names[code] = layout[1] end

local hf = {
    type = ProtoField.uint8("rsio.type", "Type", base.HEX, type_names),
    length = ProtoField.uint32("rsio.length", "Frame length", base.DEC),
    codec = ProtoField.string("rsio.codec", "Codec"),
    version = ProtoField.uint64("rsio.version", "Version", base.DEC),
    extensions = ProtoField.uint32("rsio.extensions", "Extensions", base.DEC),
    extension = ProtoField.uint64("rsio.extension", "Extension Id", base.DEC),
    reason = ProtoField.string("rsio.reason", "Reason", base.UNICODE),
    publisher = ProtoField.string("rsio.publisher", "Publisher", base.UNICODE),
    subscriber = ProtoField.uint64("rsio.subscriber", "Subscriber Id", base.DEC),
    initial_demand = ProtoField.uint64("rsio.initial_demand", "Initial demand", base.DEC),
    initial_demand_negative = ProtoField.int64("rsio.initial_demand.negative", "Initial demand (negative)", base.DEC),
    demand = ProtoField.uint64("rsio.demand", "Demand", base.DEC),
    demand_negative = ProtoField.int64("rsio.demand.negative", "Demand (negative)", base.DEC),
    unbounded = ProtoField.bool("rsio.unbounded", "Unbounded (at or above 2^63-1)"),
    element_size = ProtoField.uint32("rsio.element_size", "Element size (0 = variable)", base.DEC),
    fixed_size = ProtoField.bool("rsio.fixed_size", "Fixed-size (raw bytes, no length on the wire)"),
    element = ProtoField.bytes("rsio.element", "Element"),
    element_length = ProtoField.uint32("rsio.element.length", "Element length", base.DEC),
    count = ProtoField.uint64("rsio.count", "Count", base.DEC),
    element_id = ProtoField.uint64("rsio.element_id", "Element Id", base.DEC),
    last_part = ProtoField.bool("rsio.last_part", "Last part"),
    data = ProtoField.bytes("rsio.data", "Data"),
    data_length = ProtoField.uint32("rsio.data.length", "Data length", base.DEC),
    error = ProtoField.string("rsio.error", "Error", base.UNICODE),
    rule = ProtoField.string("rsio.rule", "Broken rule"),
    problem = ProtoField.string("rsio.problem", "Problem"),
    undecoded = ProtoField.bytes("rsio.undecoded", "Not decoded"),
}
local field_list = {}
for _, field in pairs(hf) do field_list[#field_list + 1] = field end
rsio.fields = field_list

local ef_malformed = ProtoExpert.new("rsio.malformed", "Malformed RS-IO frame", expert.group.MALFORMED, expert.severity.ERROR)
rsio.experts = { ef_malformed }

-- Preferences -----------------------------------------------------------------------------------

local CODEC_AUTO, CODEC_MSGPACK, CODEC_VARINT = 0, 1, 2
local CODEC_NAMES = { [CODEC_MSGPACK] = "msgpack", [CODEC_VARINT] = "varint" }
rsio.prefs.codec = Pref.enum("Codec", CODEC_AUTO,
    "Wire profile: auto (from the first hello of each TCP stream, msgpack without one), msgpack or varint",
    { { 1, "auto", CODEC_AUTO }, { 2, "msgpack", CODEC_MSGPACK }, { 3, "varint", CODEC_VARINT } }, false)
rsio.prefs.tcp_port = Pref.uint("TCP port", DEFAULT_PORT,
    "RS-IO on this TCP port (0: none); on any other port a stream is recognised by its hello")

-- Reading ---------------------------------------------------------------------------------------

local byte, sub, format = string.byte, string.sub, string.format
local INCOMPLETE, MALFORMED = "incomplete", "malformed"

-- A cursor: raw (a Lua string of the bytes at hand), p (0-based position), limit (their count),
-- frame (the name of the frame being read) and field (the field being read), for messages.

-- The frame is cut off.  reach is where it ends, when that is known: only a body that ends the
-- frame tells.  Otherwise TCP is asked for one more segment, and parsing starts over with it.
local function incomplete(reach)
    error({ kind = INCOMPLETE, reach = reach }, 0)
end

local function malformed(rule, problem, at, len)
    error({ kind = MALFORMED, rule = rule, problem = problem, at = at, len = len }, 0)
end

-- A malformed field: the problem is named after the frame and field being read.
local function bad_field(c, rule, problem, at, len)
    malformed(rule, c.frame .. "." .. c.field .. ": " .. problem, at, len)
end

local function u8(c, at)
    if at >= c.limit then incomplete(nil) end
    return byte(c.raw, at + 1)
end

local function big_endian(c, at, width)
    if at + width > c.limit then incomplete(nil) end
    local n = 0
    for i = 1, width do n = n * 256 + byte(c.raw, at + i) end
    return n
end

-- Integers come back as (n, x): n a Lua number, x nil when n is exact, else the exact value as a
-- UInt64 (or an Int64 when negative).

local function eight_bytes(c, at, signed)
    if at + 8 > c.limit then incomplete(nil) end
    local hex = format("%02x%02x%02x%02x%02x%02x%02x%02x", byte(c.raw, at + 1, at + 8))
    local x = (signed and byte(c.raw, at + 1) >= 0x80) and Int64.fromhex(hex) or UInt64.fromhex(hex)
    return x:tonumber(), x
end

-- A key for an Id: exact, and a plain number whenever it can be.
local function id_key(field)
    if field.x then return tostring(field.x) end
    return field.n
end

-- The value to put in the tree, and its text.
local function exact(n, x)
    if x then return x end
    if n < 0 then return Int64(n) end
    return UInt64(n)
end

local function text_of(n, x)
    if x then return tostring(x) end
    return format("%d", n)
end

local function utf8_valid(s)
    -- Strict UTF-8, as Python decodes it: no overlong forms, no surrogates, nothing above U+10FFFF.
    local i, n = 1, #s
    while i <= n do
        local b = byte(s, i)
        if b < 0x80 then
            i = i + 1
        else
            local need, lo, hi
            if b >= 0xC2 and b <= 0xDF then need, lo, hi = 1, 0x80, 0xBF
            elseif b == 0xE0 then need, lo, hi = 2, 0xA0, 0xBF
            elseif b == 0xED then need, lo, hi = 2, 0x80, 0x9F
            elseif b >= 0xE1 and b <= 0xEF then need, lo, hi = 2, 0x80, 0xBF
            elseif b == 0xF0 then need, lo, hi = 3, 0x90, 0xBF
            elseif b >= 0xF1 and b <= 0xF3 then need, lo, hi = 3, 0x80, 0xBF
            elseif b == 0xF4 then need, lo, hi = 3, 0x80, 0x8F
            else return false end
            if i + need > n then return false end
            local second = byte(s, i + 1)
            if second < lo or second > hi then return false end
            for k = 2, need do
                local cont = byte(s, i + k)
                if cont < 0x80 or cont > 0xBF then return false end
            end
            i = i + need + 1
        end
    end
    return true
end

-- MessagePack objects ---------------------------------------------------------------------------

local function mp_family(b)
    if b <= 0x7F or b >= 0xE0 or (b >= 0xCC and b <= 0xD3) then return "int" end
    if b <= 0x8F or b == 0xDE or b == 0xDF then return "map" end
    if b <= 0x9F or b == 0xDC or b == 0xDD then return "array" end
    if b <= 0xBF or (b >= 0xD9 and b <= 0xDB) then return "str" end
    if b == 0xC0 then return "nil" end
    if b == 0xC2 or b == 0xC3 then return "bool" end
    if b >= 0xC4 and b <= 0xC6 then return "bin" end
    if b == 0xCA or b == 0xCB then return "float" end
    if b == 0xC1 then return "the never-used byte 0xc1" end
    return "ext"
end

local MP_UINT = { [0xCC] = 1, [0xCD] = 2, [0xCE] = 4, [0xCF] = 8 }
local MP_INT = { [0xD0] = 1, [0xD1] = 2, [0xD2] = 4, [0xD3] = 8 }
-- Per family: the width of the length after each marker, and the fix range (marker, mask).
local MP_SIZED = {
    str = { [0xD9] = 1, [0xDA] = 2, [0xDB] = 4, fix = 0xA0, mask = 0x20 },
    bin = { [0xC4] = 1, [0xC5] = 2, [0xC6] = 4 },
    array = { [0xDC] = 2, [0xDD] = 4, fix = 0x90, mask = 0x10 },
}

local MSGPACK = { name = "msgpack" }

function MSGPACK.type_code(c)
    local code = u8(c, c.p)
    c.p = c.p + 1
    return code
end

function MSGPACK.int(c, kind)
    local at = c.p
    local b = u8(c, at)
    if b <= 0x7F then
        c.p = at + 1
        return b
    elseif b >= 0xE0 then
        c.p = at + 1
        return b - 256
    end
    local width = MP_UINT[b]
    local n, x
    if width then
        if width == 8 then n, x = eight_bytes(c, at + 1, false) else n = big_endian(c, at + 1, width) end
    else
        width = MP_INT[b]
        if not width then bad_field(c, "ERR-4", "expected " .. kind .. ", got MessagePack " .. mp_family(b), at, 1) end
        if width == 8 then
            n, x = eight_bytes(c, at + 1, true)
        else
            n = big_endian(c, at + 1, width)
            local half = 2 ^ (8 * width - 1)
            if n >= half then n = n - 2 * half end
        end
    end
    c.p = at + 1 + width
    return n, x
end

-- The length of the str, bin or array object at c.p, checked against limit; c.p moves past its header.
local function mp_sized(c, kind, family, limit)
    local at = c.p
    local b = u8(c, at)
    local spec = MP_SIZED[family]
    local length
    if spec.fix and b >= spec.fix and b < spec.fix + spec.mask then
        length, c.p = b - spec.fix, at + 1
    elseif spec[b] then
        length, c.p = big_endian(c, at + 1, spec[b]), at + 1 + spec[b]
    else
        bad_field(c, "ERR-4", "expected " .. kind .. ", got MessagePack " .. mp_family(b), at, 1)
    end
    if length > limit then
        local unit = family == "array" and " items" or " bytes"
        bad_field(c, "ERR-8", family .. " of " .. length .. unit .. " announced, over the limit " .. limit, at, c.p - at)
    end
    return length
end

function MSGPACK.str_length(c) return mp_sized(c, STR, "str", MAX_STRING) end
function MSGPACK.bin_length(c) return mp_sized(c, BIN, "bin", MAX_ELEMENT) end
function MSGPACK.array_count(c) return mp_sized(c, IDS, "array", MAX_ARRAY) end

-- Varints ---------------------------------------------------------------------------------------

local VARINT = { name = "varint" }

function VARINT.int(c)
    local at = c.p
    local raw, limit = c.raw, c.limit
    if at < limit then -- the common case: one byte
        local b = byte(raw, at + 1)
        if b < 0x80 then
            c.p = at + 1
            return b
        end
    end
    local digits = {}
    for i = 0, 9 do
        if at + i >= limit then incomplete(nil) end
        local b = byte(raw, at + i + 1)
        if i == 9 then
            if b >= 0x80 then bad_field(c, "ERR-10", "varint longer than 10 bytes", at, 10) end
            if b > 1 then bad_field(c, "ERR-10", "varint value 2^64 or more", at, 10) end
        end
        digits[i + 1] = b % 128
        if b < 0x80 then break end
    end
    c.p = at + #digits
    if #digits <= 7 then -- below 2^49: exact as a Lua number
        local n = 0
        for i = #digits, 1, -1 do n = n * 128 + digits[i] end
        return n
    end
    local x = UInt64(0)
    for i = #digits, 1, -1 do x = x:lshift(7):bor(UInt64(digits[i])) end
    return x:tonumber(), x
end

function VARINT.type_code(c)
    c.frame, c.field = "frame", "type code"
    return (VARINT.int(c))
end

local function varint_length(c, limit, unit)
    local at = c.p
    local length = VARINT.int(c)
    if length > limit then
        bad_field(c, "ERR-8", unit .. " of " .. format("%.0f", length) .. " announced, over the limit " .. limit, at, c.p - at)
    end
    return length
end

function VARINT.str_length(c) return varint_length(c, MAX_STRING, "string") end
function VARINT.bin_length(c) return varint_length(c, MAX_ELEMENT, "byte array") end
function VARINT.array_count(c) return varint_length(c, MAX_ARRAY, "array") end

-- Frames ----------------------------------------------------------------------------------------

local function type_code_problem(code)
    if code >= 0x40 and code <= 0x7F then
        return "EXT-2", format("type code 0x%02x belongs to an extension that was not negotiated", code)
    end
    local what = (code >= 0x0E and code <= 0x3F) and "reserved" or "invalid"
    return "ERR-7", format("%s type code 0x%02x", what, code)
end

local function take_body(c, field, length)
    if c.p + length > c.limit then incomplete(c.last and c.p + length or nil) end
    field.body_at, field.body_len = c.p, length
    c.p = c.p + length
end

-- One frame at c.p.  element_size(frame, id) is the elementSize of subscriber Id id in this
-- direction (0: variable size).
local function parse_frame(c, codec, element_size)
    local at = c.p
    c.frame_at = at
    local code = codec.type_code(c)
    local layout = LAYOUT[code]
    if layout == nil then
        local rule, problem = type_code_problem(code)
        malformed(rule, problem, at, c.p - at)
    end
    local frame = { code = code, at = at, type_len = c.p - at, name = layout[1] }
    c.frame = frame.name
    for index = 2, #layout do
        local name, kind = layout[index][1], layout[index][2]
        local field = { name = name, at = c.p }
        frame[index - 1] = field
        frame[name] = field
        c.field, c.last = name, index == #layout
        if kind == STR then
            local length = codec.str_length(c)
            take_body(c, field, length)
            local text = sub(c.raw, field.body_at + 1, field.body_at + length)
            if not utf8_valid(text) then bad_field(c, "ERR-5", "string is not valid UTF-8", field.at, c.p - field.at) end
            field.text = text
        elseif kind == BIN then
            local size = 0
            if code == 0x08 or code == 0x0B then size = element_size(frame, id_key(frame.subscriber)) end
            if code == 0x0B then
                if size == 0 then
                    malformed("PACK-2", "onNextPacked(subscriber=" .. text_of(frame.subscriber.n, frame.subscriber.x)
                        .. ") on a stream that is not in fixed-size mode", at, c.p - at)
                end
                if size * frame.count.n > MAX_FRAME then
                    malformed("ERR-8", "onNextPacked of " .. text_of(frame.count.n, frame.count.x) .. " x " .. size
                        .. " bytes exceeds the frame limit " .. MAX_FRAME, at, c.p - at)
                end
                take_body(c, field, size * frame.count.n)
            elseif size > 0 then
                take_body(c, field, size)
            else
                take_body(c, field, codec.bin_length(c))
            end
            if size > 0 then field.fixed, frame.element_size = true, size end
        elseif kind == IDS then
            local items = {}
            field.items = items
            for i = 1, codec.array_count(c) do
                c.field = name .. "[" .. (i - 1) .. "]"
                local item_at = c.p
                local n, x = codec.int(c, ID)
                if n < 0 or (x and x > ID_MAX) then
                    bad_field(c, "ERR-9", "Id " .. text_of(n, x) .. " is outside 0..2^63-1", item_at, c.p - item_at)
                end
                items[i] = { at = item_at, len = c.p - item_at, n = n, x = x }
            end
        else
            local n, x = codec.int(c, kind)
            field.n, field.x = n, x
            if kind == ID and (n < 0 or (x and x > ID_MAX)) then
                bad_field(c, "ERR-9", "Id " .. text_of(n, x) .. " is outside 0..2^63-1", field.at, c.p - field.at)
            elseif (kind == UINT or kind == ESIZE) and n < 0 then
                bad_field(c, "ERR-9", text_of(n, x) .. " is negative", field.at, c.p - field.at)
            elseif kind == COUNT and n < 1 then
                bad_field(c, "ERR-9", "count " .. text_of(n, x) .. " is below 1", field.at, c.p - field.at)
            elseif kind == ESIZE and n > MAX_ELEMENT_SIZE then
                bad_field(c, "ERR-8", text_of(n, x) .. " exceeds the limit " .. MAX_ELEMENT_SIZE, field.at, c.p - field.at)
            end
        end
        field.len = c.p - field.at
    end
    frame.len = c.p - at
    return frame
end

-- Frames from c.p on, each passed to on_frame once complete, until the bytes run out (then it
-- returns) or a frame is cut off or malformed (then it raises).
local function parse_frames(c, codec, element_size, on_frame)
    while c.p < c.limit do
        on_frame(parse_frame(c, codec, element_size))
    end
end

local function no_sizes() return 0 end

-- The codec of a stream whose first bytes (in some direction) are raw: "msgpack" or "varint"; nil
-- when they are the start of a hello that needs more bytes to tell; false when they are no hello.
local function hello_codec(raw, limit)
    if limit == 0 then return nil end
    local first = byte(raw, 1)
    if first ~= 0x01 and first ~= 0x02 then return false end
    local waiting = false
    for _, codec in ipairs({ MSGPACK, VARINT }) do
        local ok, result = pcall(parse_frame, { raw = raw, p = 0, limit = limit }, codec, no_sizes)
        if ok then return codec.name end
        if type(result) ~= "table" then error(result, 0) end
        if result.kind == INCOMPLETE then waiting = true end
        -- A hello announcing more extensions than the limit is still a hello (and malformed).
        if result.rule == "ERR-8" then return codec.name end
    end
    if waiting then return nil end
    return false
end

-- The codec of a stream that starts with something else than a hello (a peer breaking the
-- handshake, or a capture that starts late): the first codec that reads these bytes as whole
-- frames without a malformed one (msgpack when both or neither do); nil when the first frame
-- needs more bytes to tell.
local function sniffed_codec(raw, limit)
    local waiting = false
    for _, codec in ipairs({ MSGPACK, VARINT }) do
        local c = { raw = raw, p = 0, limit = limit }
        local ok, result = pcall(parse_frames, c, codec, no_sizes, function() end)
        if not ok and type(result) ~= "table" then error(result, 0) end
        if ok or (result.kind == INCOMPLETE and c.frame_at > 0) then return codec.name end
        if result.kind == INCOMPLETE then waiting = true end
    end
    if waiting then return nil end
    return "msgpack"
end

-- State -----------------------------------------------------------------------------------------

-- Streams are told apart by their endpoints.  (Not by tcp.stream: field values exist only when
-- Wireshark builds a tree, and tshark -2 dissects its first pass without one.)
local streams = {} -- per TCP stream: {codec = name or nil, dirs = {[sender] = {sizes = {}, dead = bool}}}
local recorded = {} -- per place in the capture: what the first pass read there
local heuristic_tried = {} -- per stream and direction: whether the heuristic has judged its first bytes

local ws_carried = {} -- WebSocket: per packet and message length, the stream bytes the first pass decoded there

function rsio.init()
    streams, recorded, heuristic_tried, ws_carried = {}, {}, {}, {}
end

local function endpoints(pinfo)
    local sender = tostring(pinfo.src) .. "/" .. pinfo.src_port
    local receiver = tostring(pinfo.dst) .. "/" .. pinfo.dst_port
    return sender, (sender < receiver) and (sender .. " " .. receiver) or (receiver .. " " .. sender)
end

local function stream_of(pinfo)
    local sender, key = endpoints(pinfo)
    local stream = streams[key]
    if stream == nil then
        stream = { codec = nil, dirs = {} }
        streams[key] = stream
    end
    local dir = stream.dirs[sender]
    if dir == nil then
        dir = { sizes = {}, dead = false }
        stream.dirs[sender] = dir
    end
    return stream, dir
end

-- Rendering -------------------------------------------------------------------------------------

local function add_int(tree, tvb, field, hf_field, hf_negative)
    if field.n < 0 and hf_negative then
        return tree:add(hf_negative, tvb(field.at, field.len), exact(field.n, field.x))
    end
    return tree:add(hf_field, tvb(field.at, field.len), exact(field.n, field.x))
end

local function add_bytes(tree, tvb, field, hf_bytes, hf_length)
    if field.body_len > 0 then
        tree:add(hf_bytes, tvb(field.body_at, field.body_len))
    else
        tree:add(hf_bytes, tvb(field.at, field.len), "")
    end
    tree:add(hf_length, field.body_len):set_generated()
end

local function describe(frame)
    local parts = {}
    for i, field in ipairs(frame) do
        local shown
        if field.text then
            shown = format("%q", #field.text > 40 and sub(field.text, 1, 40) .. "..." or field.text)
        elseif field.body_len then
            shown = field.body_len .. " bytes"
        elseif field.items then
            local ids = {}
            for k, item in ipairs(field.items) do ids[k] = text_of(item.n, item.x) end
            shown = "[" .. table.concat(ids, ", ") .. "]"
        else
            shown = text_of(field.n, field.x)
        end
        parts[i] = field.name .. "=" .. shown
    end
    return frame.name .. "(" .. table.concat(parts, ", ") .. ")"
end

local function render(tree, tvb, frame, codec_name)
    local item = tree:add(rsio, tvb(frame.at, frame.len), "RS-IO " .. describe(frame))
    item:add(hf.type, tvb(frame.at, frame.type_len), frame.code)
    item:add(hf.length, frame.len):set_generated()
    if frame.code <= 0x02 then item:add(hf.codec, codec_name):set_generated() end -- what auto chose
    for _, field in ipairs(frame) do
        local name = field.name
        if field.text then
            item:add(hf[name], tvb(field.at, field.len), field.text)
        elseif field.items then
            local list = item:add(hf.extensions, tvb(field.at, field.len), #field.items)
            for _, entry in ipairs(field.items) do
                list:add(hf.extension, tvb(entry.at, entry.len), exact(entry.n, entry.x))
            end
        elseif field.body_len then
            if frame.code == 0x08 then
                add_bytes(item, tvb, field, hf.element, hf.element_length)
            else
                add_bytes(item, tvb, field, hf.data, hf.data_length)
            end
            if field.fixed then
                item:add(hf.fixed_size, true):set_generated()
                item:add(hf.element_size, frame.element_size):set_generated()
            end
        elseif name == "initial_demand" or name == "demand" then
            add_int(item, tvb, field, hf[name], hf[name .. "_negative"])
            if field.x and field.n >= 0 and field.x >= ID_MAX then item:add(hf.unbounded, true):set_generated() end
        elseif name == "element_size" then
            item:add(hf.element_size, tvb(field.at, field.len), field.n)
        else
            add_int(item, tvb, field, hf[name])
        end
    end
    if frame.code == 0x0C or frame.code == 0x0D then item:add(hf.last_part, frame.code == 0x0D):set_generated() end
end

local function render_malformed(tree, tvb, failure, frame_at, limit)
    local item = tree:add(rsio, tvb(frame_at, limit - frame_at), "RS-IO malformed frame: " .. failure.problem)
    item:add(hf.rule, failure.rule):set_generated()
    item:add(hf.problem, failure.problem):set_generated()
    local bad_at = math.min(math.max(failure.at or frame_at, frame_at), limit - 1)
    local bad_len = math.max(math.min(failure.len or 1, limit - bad_at), 1)
    item:add_tvb_expert_info(ef_malformed, tvb(bad_at, bad_len),
        "Malformed RS-IO frame (" .. failure.rule .. "): " .. failure.problem)
end

local INFO_FRAMES = 6 -- frames named in the Info column per dissection; the rest are counted

local function set_info(pinfo, names, more)
    if #names == 0 then return end
    local text = table.concat(names, ", ")
    if more > 0 then text = text .. ", ... (" .. more .. " more)" end
    if pinfo.private.rsio_info then
        pinfo.cols.info:append(", " .. text)
    else
        pinfo.cols.info:set(text)
        pinfo.private.rsio_info = "1"
    end
end

-- The dissector ---------------------------------------------------------------------------------

local function dissect(tvb, pinfo, tree)
    local limit = tvb:captured_len()
    if limit == 0 then return 0 end
    local stream, dir = stream_of(pinfo)
    local visited = pinfo.visited
    local raw = tvb:raw(0, limit)

    -- A WebSocket connection on RS-IO's port (a listen-mode run's pcap): not RS-IO on TCP.  Declined,
    -- it goes to HTTP, which hands the rest of the connection to the WebSocket dissector (whose "ws"
    -- heuristics decode the payload).
    if stream.codec == nil and not dir.websocket and (raw:sub(1, 4) == "GET " or raw:sub(1, 9) == "HTTP/1.1 ") then
        return 0
    end

    if stream.codec == nil then
        local preferred = rsio.prefs.codec
        if preferred ~= CODEC_AUTO then
            stream.codec = CODEC_NAMES[preferred]
        else
            local found = hello_codec(raw, limit)
            if found == false then found = sniffed_codec(raw, limit) end
            if found == nil and pinfo.can_desegment > 0 then
                pinfo.desegment_offset, pinfo.desegment_len = 0, DESEGMENT_ONE_MORE_SEGMENT
                return limit
            end
            stream.codec = found or "msgpack"
        end
    end
    local codec = stream.codec == "varint" and VARINT or MSGPACK
    pinfo.cols.protocol = "RS-IO"

    -- Where this call's bytes are in the capture, for what the first pass recorded.
    local place = pinfo.number .. ":" .. tvb:offset() .. ":" .. tvb:reported_len() .. ":"
    if (visited and recorded[place] == "dead") or (not visited and dir.dead) then
        recorded[place] = "dead"
        local item = tree:add(rsio, tvb(0, limit), "RS-IO: " .. limit
            .. " bytes after a malformed frame in this direction, not decoded")
        item:add(hf.undecoded, tvb(0, limit))
        set_info(pinfo, { "[not decoded: after a malformed frame]" }, 0)
        return limit
    end

    local sizes = dir.sizes
    local function element_size(frame, id)
        if visited then return recorded[place .. frame.at] or 0 end
        local size = sizes[id] or 0
        if size > 0 then recorded[place .. frame.at] = size end
        return size
    end
    local names, more = {}, 0
    local function on_frame(frame)
        if not visited then
            local code = frame.code
            if code == 0x07 then
                local size = frame.element_size.n
                sizes[id_key(frame.subscriber)] = size > 0 and size or nil
            elseif code == 0x09 or code == 0x0A then
                sizes[id_key(frame.subscriber)] = nil
            end
        end
        render(tree, tvb, frame, codec.name)
        if #names < INFO_FRAMES then
            local id = frame.subscriber
            names[#names + 1] = id and (frame.name .. "(" .. text_of(id.n, id.x) .. ")") or frame.name
        else
            more = more + 1
        end
    end

    local c = { raw = raw, p = 0, limit = limit }
    local ok, failure = pcall(parse_frames, c, codec, element_size, on_frame)
    set_info(pinfo, names, more)
    if ok then return limit end
    if type(failure) ~= "table" then error(failure, 0) end -- a bug: let Wireshark show the Lua error
    local frame_at = c.frame_at or c.p
    if failure.kind == INCOMPLETE then
        if dir.websocket then
            dir.cut_at = frame_at -- the WebSocket heuristic carries the rest into the next message
            tree:add(rsio, tvb(frame_at, limit - frame_at), "RS-IO: frame continues in the next WebSocket message")
        elseif pinfo.can_desegment > 0 then
            pinfo.desegment_offset = frame_at
            pinfo.desegment_len = failure.reach and (failure.reach - limit) or DESEGMENT_ONE_MORE_SEGMENT
        else
            tree:add(rsio, tvb(frame_at, limit - frame_at),
                "RS-IO: frame continues beyond this segment (enable TCP reassembly to decode it)")
        end
        return limit
    end
    render_malformed(tree, tvb, failure, frame_at, limit)
    set_info(pinfo, { "[malformed " .. failure.rule .. "]" }, 0)
    if not visited then dir.dead = true end
    return limit -- the rest of these bytes is the malformed frame or comes after it
end

rsio.dissector = dissect

-- Recognition -----------------------------------------------------------------------------------

local HEURISTIC_WINDOW = 4096 -- a hello longer than this (over a thousand extensions) is not guessed

-- Whether bytes that start with a hello read as frames up to their end (the last may be cut off).
-- A hello over the extension limit (ERR-8) is still taken for RS-IO.
local function reads_as_frames(raw, limit, codec_name)
    local sizes = {}
    local function element_size(_, id) return sizes[id] or 0 end
    local function track(frame)
        if frame.code == 0x07 then
            sizes[id_key(frame.subscriber)] = frame.element_size.n > 0 and frame.element_size.n or nil
        end
    end
    local ok, failure = pcall(parse_frames, { raw = raw, p = 0, limit = limit },
        codec_name == "varint" and VARINT or MSGPACK, element_size, track)
    if ok then return true end
    if type(failure) ~= "table" then error(failure, 0) end
    return failure.kind == INCOMPLETE or failure.rule == "ERR-8"
end

local function heuristic(tvb, pinfo, tree)
    local limit = math.min(tvb:captured_len(), HEURISTIC_WINDOW)
    if limit == 0 then return false end
    local accepted = "hello at " .. pinfo.number
    if pinfo.visited then
        if not recorded[accepted] then return false end
    else
        -- Only the first bytes of each direction of each stream: TCP asks the heuristics about
        -- each segment of a stream that no dissector has claimed yet, and a hello only ever
        -- starts a direction.  Keyed by stream and sender, not by sender alone: a server's
        -- endpoint is the same in all its connections, so after one stream where the server
        -- spoke first its hello would never be looked at again (a client that breaks the
        -- handshake, HS-004, leaves the server's hello as the stream's only one).
        local sender, stream_key = endpoints(pinfo)
        local direction = stream_key .. " from " .. sender
        if heuristic_tried[direction] then return false end
        heuristic_tried[direction] = true
        local raw = tvb:raw(0, limit)
        local found = hello_codec(raw, limit)
        if found == false or (found == nil and limit == HEURISTIC_WINDOW) then return false end
        if found and not reads_as_frames(raw, limit, found) then return false end
        recorded[accepted] = true
    end
    pinfo.conversation = rsio
    dissect(tvb, pinfo, tree) -- directly: through rsio.dissector, TCP reassembly would be off for this call
    return true
end

rsio:register_heuristic("tcp", heuristic)

local tcp_port_table = DissectorTable.get("tcp.port")
local registered_port = 0

local function register_port()
    if registered_port ~= 0 then tcp_port_table:remove(registered_port, rsio) end
    registered_port = rsio.prefs.tcp_port
    if registered_port ~= 0 then tcp_port_table:add(registered_port, rsio) end
end

function rsio.prefs_changed()
    if registered_port ~= rsio.prefs.tcp_port then register_port() end
end

register_port()
tcp_port_table:add_for_decode_as(rsio)

-- Over WebSocket (SPEC.md "WebSocket transport": RS-IO is a byte stream in binary messages whose
-- boundaries mean nothing).  Wireshark's WebSocket dissector hands each message's unmasked payload to
-- the "ws" heuristics; a frame may span messages, so on the first pass each direction carries the
-- bytes of a frame still incomplete into its next message, and the frames are decoded from a data
-- source "RS-IO stream" (the carried bytes, then the message's).  A direction is recognised by a
-- hello at the start of its first message, as on TCP.

local PENDING = "pending" -- ws_carried's mark of a message holding only the start of a hello

local function ws_heuristic(tvb, pinfo, tree)
    local size = tvb:captured_len()
    if size == 0 then return false end
    local stream, dir = stream_of(pinfo)
    local key = pinfo.number .. ":" .. size .. ":" .. tostring(pinfo.src) .. "/" .. pinfo.src_port
    local function pending()
        pinfo.cols.protocol = "RS-IO"
        tree:add(rsio, tvb(0, size), "RS-IO: the start of a hello, continued in the next WebSocket message")
        return true
    end
    local bytes
    if pinfo.visited then
        bytes = ws_carried[key]
        if bytes == nil then return false end
        if bytes == PENDING then return pending() end
    else
        bytes = (dir.carry or ByteArray.new()) .. tvb:bytes()
        if not dir.websocket then
            local sender, stream_key = endpoints(pinfo)
            local direction = "ws " .. stream_key .. " from " .. sender
            if heuristic_tried[direction] then return false end
            local raw = bytes:raw(0, math.min(bytes:len(), HEURISTIC_WINDOW))
            local found = hello_codec(raw, #raw)
            if found == nil and #raw < HEURISTIC_WINDOW then
                -- Too few bytes to tell (a hello written in pieces, one message each): wait for more.
                dir.carry = bytes
                ws_carried[key] = PENDING
                return pending()
            end
            heuristic_tried[direction] = true
            -- A direction that opens with something else than a hello (a goodbye refusing the
            -- connection, Decision a) is taken when the other direction's hello named the codec.
            local codec = found or (found == false and stream.codec) or nil
            if not codec or not reads_as_frames(raw, #raw, codec) then
                dir.carry = nil
                return false
            end
            dir.websocket = true
        end
        ws_carried[key] = bytes
    end
    dir.cut_at = nil
    dissect(bytes:tvb("RS-IO stream"), pinfo, tree)
    if not pinfo.visited then
        dir.carry = dir.cut_at and bytes:subset(dir.cut_at, bytes:len() - dir.cut_at) or ByteArray.new()
    end
    return true
end

rsio:register_heuristic("ws", ws_heuristic)
