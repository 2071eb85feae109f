-- rsocket.lua: Wireshark dissector for RSocket over TCP, both wire profiles of rsio-tck.
-- Shipped with rsio-tck: `rsio-tck wireshark install`, or `tshark -X lua_script:$(rsio-tck wireshark path rsocket)`.
--
-- Theory of operation.  Both profiles put a length prefix before every frame on TCP:
--   rsocket-1.0 (Protocol.md): a 24-bit length that excludes itself, then a 6-byte header
--     (a reserved bit and a 31-bit stream id, then 6 bits of frame type and 10 flag bits);
--   reactivesocket-draft (seed 001, as tck/bindings/rsocket/draft.py reads it): a reserved R bit and a
--     31-bit length that counts the whole frame, itself included, then a 12-byte header (version 0,
--     a flags byte, a 16-bit frame type, a 64-bit stream id).
-- `parse_frame` reads one frame from a Lua string of the bytes at hand and returns it (every field
-- with its place), or raises INCOMPLETE (with where the frame ends, once the prefix is complete) or
-- MALFORMED (the rule broken, with the kit's rule IDs of tck/bindings/rsocket/rules.py, and why).
-- One small reader per frame type and profile, ported from v1.py and draft.py in the same order of
-- reads, so the dissector breaks the same rule the kit's decoder does, on the same frame.  A frame
-- the spec says to ignore (an unknown type with the I flag; a metadata length that does not fit,
-- with I in 1.0, always in the draft) is shown as an ignored frame, not as malformed, as the kit
-- returns an IgnoredFrame for it.
--
-- The dissector parses a TCP payload frame by frame; when the last frame is cut off it asks TCP for
-- the missing bytes (pinfo.desegment_offset / desegment_len: exactly how many once the prefix is
-- read, else one more segment), so TCP reassembly joins frames split across segments, and one
-- segment may carry many frames.  A length prefix is judged as soon as it is complete (a draft R
-- bit, a length shorter than the header or over the kit's 16,777,215-byte limit), never waiting for
-- a body that will not come.  After a malformed frame nothing more of that direction is decoded (the
-- kit's decoder stops there too), nor after a frame cut off by a segment when TCP reassembly is off
-- (the next segment starts inside it); the first pass records that per packet, so a
-- second pass (the GUI, tshark -2) shows the same.
--
-- Recognition: Decode As (TCP port), the TCP port preference (default none), and a heuristic on the
-- first bytes of each direction of each TCP stream: a whole SETUP or RESUME (or the start of one)
-- with stream id 0 and a plausible version, or a first frame (whole in that segment) of a known
-- type on a plausible stream id that reads without error, as do the frames after it in the segment.
-- The heuristic tries the profile preference first, then the other one, and the stream keeps the
-- profile it was recognised in; a stream taken by port or Decode As uses the profile whose SETUP or
-- RESUME it starts with, else the preference (default rsocket-1.0).

local rsocket = Proto("rsocket", "RSocket")

-- The kit's receiver limit (tck/bindings/rsocket/codec.py, RSocketLimits.max_frame), without prefix.
local MAX_FRAME = 16777215

local byte, format, floor = string.byte, string.format, math.floor
local band = bit32.band

-- Frame types -----------------------------------------------------------------------------------

local V1_TYPES = {
    [0x01] = "SETUP", [0x02] = "LEASE", [0x03] = "KEEPALIVE", [0x04] = "REQUEST_RESPONSE",
    [0x05] = "REQUEST_FNF", [0x06] = "REQUEST_STREAM", [0x07] = "REQUEST_CHANNEL", [0x08] = "REQUEST_N",
    [0x09] = "CANCEL", [0x0A] = "PAYLOAD", [0x0B] = "ERROR", [0x0C] = "METADATA_PUSH", [0x0D] = "RESUME",
    [0x0E] = "RESUME_OK", [0x3F] = "EXT",
}
local DRAFT_TYPES = {
    [0x0001] = "SETUP", [0x0002] = "SETUP_ERROR", [0x0003] = "LEASE", [0x0004] = "KEEPALIVE",
    [0x0011] = "REQUEST_RESPONSE", [0x0012] = "REQUEST_FNF", [0x0013] = "REQUEST_STREAM",
    [0x0014] = "REQUEST_SUB", [0x0015] = "REQUEST_N", [0x0016] = "CANCEL", [0x0020] = "RESPONSE",
    [0x0021] = "ERROR", [0x0031] = "METADATA_PUSH", [0xFFFF] = "EXT",
}

-- Protocol.md, ERROR frame; the draft's SETUP_ERROR has its own values.
local ERROR_CODES = {
    [0x00000000] = "RESERVED", [0x00000001] = "INVALID_SETUP", [0x00000002] = "UNSUPPORTED_SETUP",
    [0x00000003] = "REJECTED_SETUP", [0x00000004] = "REJECTED_RESUME", [0x00000101] = "CONNECTION_ERROR",
    [0x00000102] = "CONNECTION_CLOSE", [0x00000201] = "APPLICATION_ERROR", [0x00000202] = "REJECTED",
    [0x00000203] = "CANCELED", [0x00000204] = "INVALID", [0xFFFFFFFF] = "RESERVED_FOR_EXTENSION",
}
local DRAFT_SETUP_ERROR_CODES = {
    [0x0000] = "RESERVED", [0x0001] = "INVALID_SETUP", [0x0010] = "UNSUPPORTED_SETUP",
    [0x0100] = "REJECTED_SETUP", [0xFFFF] = "RESERVED_FOR_EXTENSION",
}
local CONNECTION_ERROR, APPLICATION_ERROR = 0x00000101, 0x00000201

-- Fields ----------------------------------------------------------------------------------------
-- Fields that sit at different bits in the two profiles are registered twice under one filter name
-- (same type, different width or mask): `rsocket.type == 0x0a` and `rsocket.flags.follows` work in both.

local hf = {
    profile = ProtoField.string("rsocket.profile", "Wire profile"),
    length_v1 = ProtoField.uint32("rsocket.length", "Frame length (without this prefix)", base.DEC),
    length_draft = ProtoField.uint32("rsocket.length", "Frame length (whole frame)", base.DEC, nil, 0x7FFFFFFF),
    reserved_r = ProtoField.bool("rsocket.reserved", "Reserved (R)", 32, nil, 0x80000000),
    frame_size = ProtoField.uint32("rsocket.frame_size", "Frame size on the wire (length prefix included)", base.DEC),
    stream_id = ProtoField.uint64("rsocket.stream_id", "Stream ID", base.DEC),
    version_draft = ProtoField.uint8("rsocket.header_version", "Header version", base.DEC),
    type_v1 = ProtoField.uint16("rsocket.type", "Frame type", base.HEX, V1_TYPES, 0xFC00),
    type_draft = ProtoField.uint16("rsocket.type", "Frame type", base.HEX, DRAFT_TYPES),
    type_name = ProtoField.string("rsocket.type_name", "Frame type name"),
    flags_v1 = ProtoField.uint16("rsocket.flags", "Flags", base.HEX, nil, 0x03FF),
    flags_draft = ProtoField.uint16("rsocket.flags", "Flags", base.HEX),
    -- 1.0: ten flag bits in the low bits of the type word.
    v1_ignore = ProtoField.bool("rsocket.flags.ignore", "(I)gnore if not understood", 16, nil, 0x200),
    v1_metadata = ProtoField.bool("rsocket.flags.metadata", "(M)etadata present", 16, nil, 0x100),
    v1_follows = ProtoField.bool("rsocket.flags.follows", "(F)ollows: more fragments", 16, nil, 0x80),
    v1_resume = ProtoField.bool("rsocket.flags.resume", "(R)esume enabled: token present", 16, nil, 0x80),
    v1_respond = ProtoField.bool("rsocket.flags.respond", "(R)espond with a KEEPALIVE", 16, nil, 0x80),
    v1_complete = ProtoField.bool("rsocket.flags.complete", "(C)omplete", 16, nil, 0x40),
    v1_lease = ProtoField.bool("rsocket.flags.lease", "(L)ease: will honor LEASE", 16, nil, 0x40),
    v1_next = ProtoField.bool("rsocket.flags.next", "(N)ext", 16, nil, 0x20),
    -- The draft: a flags byte.
    draft_ignore = ProtoField.bool("rsocket.flags.ignore", "(I)gnore if not understood", 8, nil, 0x80),
    draft_metadata = ProtoField.bool("rsocket.flags.metadata", "(M)etadata present", 8, nil, 0x40),
    draft_lease = ProtoField.bool("rsocket.flags.lease", "(L)ease: will honor LEASE", 8, nil, 0x20),
    draft_strict = ProtoField.bool("rsocket.flags.strict", "(S)trict interpretation", 8, nil, 0x10),
    draft_follows = ProtoField.bool("rsocket.flags.follows", "(F)ollows: more fragments", 8, nil, 0x20),
    draft_complete = ProtoField.bool("rsocket.flags.complete", "(C)omplete", 8, nil, 0x10),
    next_implied = ProtoField.bool("rsocket.flags.next", "Next (implied: the draft's RESPONSE has no N flag)"),
    -- SETUP, RESUME
    version = ProtoField.string("rsocket.version", "Version"),
    major = ProtoField.uint16("rsocket.version.major", "Major version", base.DEC),
    minor = ProtoField.uint16("rsocket.version.minor", "Minor version", base.DEC),
    keepalive_ms = ProtoField.uint32("rsocket.setup.keepalive", "Time between KEEPALIVE frames (ms)", base.DEC),
    lifetime_ms = ProtoField.uint32("rsocket.setup.lifetime", "Max lifetime (ms)", base.DEC),
    keepalive_ns = ProtoField.uint32("rsocket.setup.keepalive", "Time between KEEPALIVE frames (ns)", base.DEC),
    lifetime_ns = ProtoField.uint32("rsocket.setup.lifetime", "Max lifetime (ns)", base.DEC),
    token_length = ProtoField.uint16("rsocket.resume_token.length", "Resume token length", base.DEC),
    token = ProtoField.bytes("rsocket.resume_token", "Resume token"),
    mime_metadata_length = ProtoField.uint8("rsocket.setup.metadata_mime.length", "Metadata MIME type length", base.DEC),
    mime_metadata = ProtoField.string("rsocket.setup.metadata_mime", "Metadata MIME type"),
    mime_data_length = ProtoField.uint8("rsocket.setup.data_mime.length", "Data MIME type length", base.DEC),
    mime_data = ProtoField.string("rsocket.setup.data_mime", "Data MIME type"),
    -- LEASE
    lease_ttl_ms = ProtoField.uint64("rsocket.lease.ttl", "Time-to-live (ms)", base.DEC),
    lease_ttl_ns = ProtoField.uint64("rsocket.lease.ttl", "Time-to-live (ns)", base.DEC),
    lease_requests = ProtoField.uint64("rsocket.lease.requests", "Number of requests", base.DEC),
    -- KEEPALIVE, RESUME, RESUME_OK
    keepalive_position = ProtoField.uint64("rsocket.keepalive.position", "Last received position", base.DEC),
    resume_server_position = ProtoField.uint64("rsocket.resume.server_position", "Last received server position", base.DEC),
    resume_client_position = ProtoField.uint64("rsocket.resume.client_position", "First available client position", base.DEC),
    resume_ok_position = ProtoField.uint64("rsocket.resume_ok.position", "Last received client position", base.DEC),
    -- requests
    initial_request_n = ProtoField.uint64("rsocket.initial_request_n", "Initial request N", base.DEC),
    request_n = ProtoField.uint64("rsocket.request_n", "Request N", base.DEC),
    -- ERROR, SETUP_ERROR
    error_code = ProtoField.uint32("rsocket.error.code", "Error code", base.HEX, ERROR_CODES),
    setup_error_code = ProtoField.uint32("rsocket.setup_error.code", "Error code", base.HEX, DRAFT_SETUP_ERROR_CODES),
    error_message = ProtoField.string("rsocket.error.message", "Error message", base.UNICODE),
    error_kind = ProtoField.string("rsocket.error.kind", "Error code range"),
    -- EXT
    ext_type = ProtoField.uint32("rsocket.ext.type", "Extended type", base.HEX),
    ext_body = ProtoField.bytes("rsocket.ext.body", "Extension body"),
    -- metadata and data
    metadata_type = ProtoField.uint8("rsocket.metadata.type", "Metadata type (application-defined)", base.HEX),
    metadata_length_v1 = ProtoField.uint24("rsocket.metadata_length", "Metadata length", base.DEC),
    metadata_length_draft = ProtoField.uint24("rsocket.metadata_length", "Metadata length (with its 4-byte header)", base.DEC),
    metadata = ProtoField.bytes("rsocket.metadata", "Metadata"),
    metadata_size = ProtoField.uint32("rsocket.metadata.size", "Metadata size", base.DEC),
    data = ProtoField.bytes("rsocket.data", "Data"),
    data_size = ProtoField.uint32("rsocket.data.size", "Data size", base.DEC),
    -- what went wrong
    ignored = ProtoField.string("rsocket.ignored", "Ignored frame (rule)"),
    rule = ProtoField.string("rsocket.rule", "Broken rule"),
    problem = ProtoField.string("rsocket.problem", "Problem"),
    undecoded = ProtoField.bytes("rsocket.undecoded", "Not decoded"),
}
local field_list = {}
for _, field in pairs(hf) do field_list[#field_list + 1] = field end
rsocket.fields = field_list

local ef_malformed = ProtoExpert.new("rsocket.malformed", "Malformed RSocket frame", expert.group.MALFORMED, expert.severity.ERROR)
local ef_ignored = ProtoExpert.new("rsocket.ignored.expert", "RSocket frame to be ignored by its receiver",
    expert.group.PROTOCOL, expert.severity.NOTE)
rsocket.experts = { ef_malformed, ef_ignored }

-- Preferences -----------------------------------------------------------------------------------

local PROFILE_V1, PROFILE_DRAFT = 1, 2
rsocket.prefs.profile = Pref.enum("Wire profile", PROFILE_V1,
    "The profile of a stream that does not start with a SETUP or RESUME of either (the heuristic also tries this one first)",
    { { 1, "rsocket-1.0", PROFILE_V1 }, { 2, "reactivesocket-draft", PROFILE_DRAFT } }, false)
rsocket.prefs.tcp_port = Pref.uint("TCP port", 0,
    "RSocket on this TCP port (0: none); on any other port a stream is recognised by its first frames, or with Decode As")

-- Reading ---------------------------------------------------------------------------------------

local INCOMPLETE, MALFORMED, IGNORE = "incomplete", "malformed", "ignore"

-- The frame is cut off; reach is where it ends, when the prefix tells.
local function incomplete(reach)
    error({ kind = INCOMPLETE, reach = reach }, 0)
end

local function malformed(rule, problem, at, len)
    error({ kind = MALFORMED, rule = rule, problem = problem, at = at, len = len }, 0)
end

local function ignore(rule, reason)
    error({ kind = IGNORE, rule = rule, reason = reason }, 0)
end

-- Big-endian unsigned of width <= 4 bytes (exact as a Lua number).
local function be(raw, at, width)
    local n = 0
    for i = 1, width do n = n * 256 + byte(raw, at + i) end
    return n
end

-- Eight bytes as a UInt64 (always exact).
local function be64(raw, at)
    return UInt64.fromhex(format("%02x%02x%02x%02x%02x%02x%02x%02x", byte(raw, at + 1, at + 8)))
end

-- A body cursor: c.raw, c.p (0-based), c.stop (the frame's end), c.frame (the frame being built).
-- Each read appends an item {hf, at, len} to the frame, in wire order, for rendering.

local function remaining(c) return c.stop - c.p end

local function item(c, field, at, len)
    local items = c.frame.items
    items[#items + 1] = { hf = field, at = at, len = len }
end

local function fixed(c, size, name)
    if c.stop - c.p < size then
        malformed("RS-FRAME-6", format("%s: frame ends inside %s (%d of %d bytes)", c.frame.name, name, remaining(c), size),
            c.p, remaining(c))
    end
    local at = c.p
    c.p = at + size
    return at
end

-- An unsigned field; a Lua number (UInt64 when 8 bytes wide).
local function uint(c, size, name, field)
    local at = fixed(c, size, name)
    if field then item(c, field, at, size) end
    if size == 8 then return be64(c.raw, at) end
    return be(c.raw, at, size)
end

-- An unsigned field whose top bit is reserved (the 31- and 63-bit fields of 1.0).
local function reserved_high(c, size, name, field)
    local at = c.p
    local value = uint(c, size, name, field)
    if byte(c.raw, at + 1) >= 0x80 then
        malformed("RS-FRAME-3", format("%s: reserved high bit of %s is set", c.frame.name, name), at, size)
    end
    return value
end

-- size bytes announced by a length field.
local function take(c, size, name, field)
    if c.stop - c.p < size then
        malformed("RS-FRAME-5", format("%s: %s of %d bytes runs past the end of the frame (%d left)",
            c.frame.name, name, size, remaining(c)), c.p, remaining(c))
    end
    local at = c.p
    c.p = at + size
    if field then item(c, field, at, size) end
    return at
end

local function done(c)
    if c.p ~= c.stop then
        malformed("RS-FRAME-7", format("%s: %d bytes after the last field of the frame", c.frame.name, remaining(c)),
            c.p, remaining(c))
    end
end

local function metadata(c, size)
    local at = c.p
    c.p = at + size
    c.frame.metadata_size = size
    item(c, hf.metadata, at, size)
end

local function data(c, field)
    local at = c.p
    c.p = c.stop
    c.frame.data_size = c.stop - at
    item(c, field or hf.data, at, c.stop - at)
    return at
end

local function has(frame, bit) return band(frame.flags, bit) ~= 0 end

-- rsocket-1.0 (v1.py) -----------------------------------------------------------------------------

local V1_I, V1_M, V1_F, V1_C, V1_N = 0x200, 0x100, 0x80, 0x40, 0x20
local V1_R, V1_L = 0x80, 0x40

local function v1_metadata_and_data(c)
    local f = c.frame
    if not has(f, V1_M) then
        data(c)
        return
    end
    local problem
    if remaining(c) < 3 then
        problem = format("frame ends inside the metadata length (%d of 3 bytes)", remaining(c))
    else
        local size = uint(c, 3, "metadata length", hf.metadata_length_v1)
        if size <= remaining(c) then
            metadata(c, size)
            data(c)
            return
        end
        problem = format("metadata length %d runs past the end of the frame (%d bytes left)", size, remaining(c))
    end
    if f.ignore then ignore("RS-IGNORE-2", problem) end
    malformed("RS-FRAME-5", f.name .. ": " .. problem, c.p, remaining(c))
end

local function v1_only_metadata(c)
    if has(c.frame, V1_M) then
        metadata(c, remaining(c))
    else
        done(c)
    end
end

local function v1_version(c)
    local major = uint(c, 2, "major version", hf.major)
    local minor = uint(c, 2, "minor version", hf.minor)
    c.frame.version = major .. "." .. minor
end

local function setup_mimes(c)
    take(c, uint(c, 1, "metadata MIME length", hf.mime_metadata_length), "metadata MIME type", hf.mime_metadata)
    take(c, uint(c, 1, "data MIME length", hf.mime_data_length), "data MIME type", hf.mime_data)
end

local V1_READERS = {
    [0x01] = function(c) -- SETUP
        v1_version(c)
        reserved_high(c, 4, "time between KEEPALIVE frames", hf.keepalive_ms)
        reserved_high(c, 4, "max lifetime", hf.lifetime_ms)
        if has(c.frame, V1_R) then
            take(c, uint(c, 2, "resume token length", hf.token_length), "resume token", hf.token)
        end
        setup_mimes(c)
        v1_metadata_and_data(c)
    end,
    [0x02] = function(c) -- LEASE
        c.frame.ttl = reserved_high(c, 4, "time-to-live", hf.lease_ttl_ms)
        c.frame.count = reserved_high(c, 4, "number of requests", hf.lease_requests)
        v1_only_metadata(c)
    end,
    [0x03] = function(c) -- KEEPALIVE
        reserved_high(c, 8, "last received position", hf.keepalive_position)
        data(c)
    end,
    [0x04] = v1_metadata_and_data, -- REQUEST_RESPONSE
    [0x05] = v1_metadata_and_data, -- REQUEST_FNF
    [0x06] = function(c) -- REQUEST_STREAM
        c.frame.n = reserved_high(c, 4, "initial request N", hf.initial_request_n)
        v1_metadata_and_data(c)
    end,
    [0x08] = function(c) -- REQUEST_N
        c.frame.n = reserved_high(c, 4, "request N", hf.request_n)
        done(c)
    end,
    [0x09] = done, -- CANCEL
    [0x0A] = v1_metadata_and_data, -- PAYLOAD
    [0x0B] = function(c) -- ERROR
        c.frame.error_code = uint(c, 4, "error code", hf.error_code)
        c.frame.message_at = data(c)
    end,
    [0x0C] = function(c) -- METADATA_PUSH
        if not has(c.frame, V1_M) then malformed("RS-FRAME-9", "METADATA_PUSH without the M flag", c.frame.flags_at, 2) end
        metadata(c, remaining(c))
    end,
    [0x0D] = function(c) -- RESUME
        v1_version(c)
        take(c, uint(c, 2, "resume token length", hf.token_length), "resume token", hf.token)
        reserved_high(c, 8, "last received server position", hf.resume_server_position)
        reserved_high(c, 8, "first available client position", hf.resume_client_position)
        done(c)
    end,
    [0x0E] = function(c) -- RESUME_OK
        reserved_high(c, 8, "last received client position", hf.resume_ok_position)
        done(c)
    end,
    [0x3F] = function(c) -- EXT
        reserved_high(c, 4, "extended type", hf.ext_type)
        data(c, hf.ext_body)
        c.frame.data_size = nil -- an extension's body, not data
    end,
}
V1_READERS[0x07] = V1_READERS[0x06] -- REQUEST_CHANNEL

-- The named flag bits of each type, in display order; every type has I.
local V1_FLAGS = {
    [0x01] = { hf.v1_metadata, hf.v1_resume, hf.v1_lease },
    [0x02] = { hf.v1_metadata },
    [0x03] = { hf.v1_respond },
    [0x04] = { hf.v1_metadata, hf.v1_follows },
    [0x05] = { hf.v1_metadata, hf.v1_follows },
    [0x06] = { hf.v1_metadata, hf.v1_follows },
    [0x07] = { hf.v1_metadata, hf.v1_follows, hf.v1_complete },
    [0x0A] = { hf.v1_metadata, hf.v1_follows, hf.v1_complete, hf.v1_next },
    [0x0C] = { hf.v1_metadata },
    [0x3F] = { hf.v1_metadata },
}
local V1_LETTERS = {
    [0x01] = { { V1_M, "M" }, { V1_R, "R" }, { V1_L, "L" } },
    [0x02] = { { V1_M, "M" } },
    [0x03] = { { V1_R, "R" } },
    [0x04] = { { V1_M, "M" }, { V1_F, "F" } },
    [0x05] = { { V1_M, "M" }, { V1_F, "F" } },
    [0x06] = { { V1_M, "M" }, { V1_F, "F" } },
    [0x07] = { { V1_M, "M" }, { V1_F, "F" }, { V1_C, "C" } },
    [0x0A] = { { V1_M, "M" }, { V1_F, "F" }, { V1_C, "C" }, { V1_N, "N" } },
    [0x0C] = { { V1_M, "M" } },
    [0x3F] = { { V1_M, "M" } },
}

-- reactivesocket-draft (draft.py) --------------------------------------------------------------

local D_I, D_M, D_L, D_S, D_F, D_C = 0x80, 0x40, 0x20, 0x10, 0x20, 0x10

-- The metadata header (Type, Metadata Length counting its own 4 bytes), then the metadata.
local function draft_metadata(c)
    if not has(c.frame, D_M) then return end
    if remaining(c) < 4 then
        ignore("RS-DRAFT-2", format("frame ends inside the metadata header (%d of 4 bytes)", remaining(c)))
    end
    uint(c, 1, "metadata type", hf.metadata_type)
    local size = uint(c, 3, "metadata length", hf.metadata_length_draft)
    if size < 4 or size - 4 > remaining(c) then
        ignore("RS-DRAFT-2", format("metadata length %d does not fit the frame (%d bytes left)", size, remaining(c) + 4))
    end
    metadata(c, size - 4)
end

local function draft_metadata_only(c)
    draft_metadata(c)
    done(c)
end

local function draft_metadata_and_data(c)
    draft_metadata(c)
    data(c)
end

local function draft_initial_n(c)
    c.frame.n = uint(c, 8, "initial request N", hf.initial_request_n)
    draft_metadata_and_data(c)
end

local DRAFT_READERS = {
    [0x0001] = function(c) -- SETUP
        c.frame.version = "0 (draft)"
        uint(c, 4, "time between KEEPALIVE frames", hf.keepalive_ns)
        uint(c, 4, "max lifetime", hf.lifetime_ns)
        setup_mimes(c)
        draft_metadata_and_data(c)
    end,
    [0x0002] = function(c) -- SETUP_ERROR
        c.frame.setup_error_code = uint(c, 4, "error code", hf.setup_error_code)
        draft_metadata_and_data(c)
    end,
    [0x0003] = function(c) -- LEASE
        c.frame.ttl = uint(c, 8, "time-to-live", hf.lease_ttl_ns)
        c.frame.count = uint(c, 8, "number of requests", hf.lease_requests)
        draft_metadata_only(c)
    end,
    [0x0004] = function(c) data(c) end, -- KEEPALIVE (M: "never present")
    [0x0011] = draft_metadata_and_data, -- REQUEST_RESPONSE
    [0x0012] = draft_metadata_and_data, -- REQUEST_FNF
    [0x0013] = draft_initial_n, -- REQUEST_STREAM
    [0x0014] = draft_initial_n, -- REQUEST_SUB
    [0x0015] = function(c) -- REQUEST_N
        c.frame.n = uint(c, 8, "request N", hf.request_n)
        draft_metadata_only(c)
    end,
    [0x0016] = draft_metadata_only, -- CANCEL
    [0x0020] = function(c) -- RESPONSE
        draft_metadata_and_data(c)
        local f = c.frame
        -- draft.py: a COMPLETE with neither data nor metadata is onComplete alone, anything else an element.
        f.next = not (has(f, D_C) and f.metadata_size == nil and f.data_size == 0)
    end,
    [0x0021] = function(c) -- ERROR: no code on this wire
        draft_metadata(c)
        c.frame.message_at = data(c)
        c.frame.error_code = c.frame.stream_n == 0 and CONNECTION_ERROR or APPLICATION_ERROR
        c.frame.error_code_implied = true
    end,
    [0x0031] = function(c) -- METADATA_PUSH
        if not has(c.frame, D_M) then malformed("RS-FRAME-9", "METADATA_PUSH without the M flag", c.frame.flags_at, 1) end
        draft_metadata_only(c)
    end,
    [0xFFFF] = function(c) -- EXT
        uint(c, 4, "extended type", hf.ext_type)
        data(c, hf.ext_body)
        c.frame.data_size = nil
    end,
}

local DRAFT_FLAGS = {
    [0x0001] = { hf.draft_metadata, hf.draft_lease, hf.draft_strict },
    [0x0020] = { hf.draft_metadata, hf.draft_follows, hf.draft_complete },
}
local DRAFT_LETTERS = {
    [0x0001] = { { D_M, "M" }, { D_L, "L" }, { D_S, "S" } },
    [0x0020] = { { D_M, "M" }, { D_F, "F" }, { D_C, "C" } },
}

-- Profiles --------------------------------------------------------------------------------------

local V1 = {
    name = "rsocket-1.0", prefix = 3, header = 6, I = V1_I, types = V1_TYPES, readers = V1_READERS,
    flag_fields = V1_FLAGS, letters = V1_LETTERS, ignore_field = hf.v1_ignore, other_fields = { hf.v1_metadata },
    other_letters = { { V1_M, "M" } }, setup = 0x01, resume = 0x0D,
    -- For the heuristic: types only ever on stream 0, and types never on it.
    connection = { [0x01] = true, [0x02] = true, [0x03] = true, [0x0D] = true, [0x0E] = true },
    stream = { [0x04] = true, [0x05] = true, [0x06] = true, [0x07] = true, [0x08] = true, [0x09] = true, [0x0A] = true },
}
local DRAFT = {
    name = "reactivesocket-draft", prefix = 4, header = 12, I = D_I, types = DRAFT_TYPES, readers = DRAFT_READERS,
    flag_fields = DRAFT_FLAGS, letters = DRAFT_LETTERS, ignore_field = hf.draft_ignore,
    other_fields = { hf.draft_metadata }, other_letters = { { D_M, "M" } }, setup = 0x0001,
    connection = { [0x0001] = true, [0x0002] = true, [0x0003] = true, [0x0004] = true },
    stream = { [0x0011] = true, [0x0012] = true, [0x0013] = true, [0x0014] = true, [0x0015] = true,
        [0x0016] = true, [0x0020] = true },
}
local PROFILES = { [PROFILE_V1] = V1, [PROFILE_DRAFT] = DRAFT }

-- The frame size after the prefix at `at` (the prefix is complete), or MALFORMED.
function V1.body_size(raw, at)
    return be(raw, at, 3)
end

function DRAFT.body_size(raw, at)
    if byte(raw, at + 1) >= 0x80 then malformed("RS-FRAME-3", "reserved R bit before the frame length is set", at, 4) end
    local length = be(raw, at, 4)
    if length < 16 then
        malformed("RS-FRAME-1", format("frame length %d is shorter than the 16-byte header", length), at, 4)
    end
    return length - 4
end

-- The header at `start` into the frame: code, flags, ignore, stream id (stream_n a Lua number, or nil
-- when the 64-bit id is beyond 2^53; stream_text always).
function V1.read_header(raw, start, f)
    if byte(raw, start + 1) >= 0x80 then malformed("RS-FRAME-3", "reserved bit before the stream id is set", start, 4) end
    f.stream_n = be(raw, start, 4)
    f.stream_text = format("%d", f.stream_n)
    f.stream_at, f.stream_len = start, 4
    local word = be(raw, start + 4, 2)
    f.code, f.flags = floor(word / 1024), word % 1024
    f.type_at, f.flags_at = start + 4, start + 4
end

function DRAFT.read_header(raw, start, f)
    local version = byte(raw, start + 1)
    if version ~= 0 then malformed("RS-DRAFT-1", format("header version %d, not 0", version), start, 1) end
    f.flags, f.flags_at = byte(raw, start + 2), start + 1
    f.code, f.type_at = be(raw, start + 2, 2), start + 2
    local id = be64(raw, start + 4)
    f.stream_text = tostring(id)
    f.stream_n = (be(raw, start + 4, 4) < 0x200000) and id:tonumber() or nil
    f.stream_at, f.stream_len = start + 4, 8
end

-- One frame at `at`: a table with its place (at, len), header, items, and what the summary needs.
local function parse_frame(raw, at, limit, P)
    if limit - at < P.prefix then incomplete(nil) end
    local size = P.body_size(raw, at)
    if size > MAX_FRAME then
        malformed("RS-FRAME-2", format("frame length %d is over the frame limit %d", size, MAX_FRAME), at, P.prefix)
    end
    if size < P.header then
        malformed("RS-FRAME-1", format("frame length %d is shorter than the %d-byte header", size, P.header), at, P.prefix)
    end
    local start = at + P.prefix
    local stop = start + size
    if stop > limit then incomplete(stop) end
    local f = { at = at, len = stop - at, profile = P, items = {} }
    P.read_header(raw, start, f)
    f.ignore = band(f.flags, P.I) ~= 0
    local reader = P.readers[f.code]
    if reader == nil then
        f.name = "UNKNOWN"
        local what = format("unknown frame type 0x%02x", f.code)
        if f.ignore then
            f.ignored = { rule = "RS-IGNORE-1", reason = what .. " with the I flag set" }
            return f
        end
        malformed("RS-FRAME-4", what .. " without the I flag", f.type_at, 2)
    end
    f.name = P.types[f.code]
    local ok, failure = pcall(reader, { raw = raw, p = start + P.header, stop = stop, frame = f })
    if not ok then
        if type(failure) == "table" and failure.kind == IGNORE then
            f.ignored = { rule = failure.rule, reason = f.name .. ": " .. failure.reason }
            return f
        end
        error(failure, 0)
    end
    return f
end

-- Frames from c.p on, each passed to on_frame once whole, until the bytes run out (then it returns)
-- or a frame is cut off or malformed (then it raises); c.frame_at is where the last one started.
local function parse_frames(c, P, on_frame)
    while c.p < c.limit do
        c.frame_at = c.p
        local f = parse_frame(c.raw, c.p, c.limit, P)
        c.p = c.p + f.len
        on_frame(f)
    end
end

-- Rendering -------------------------------------------------------------------------------------

local function flag_letters(f)
    local P, out = f.profile, {}
    if f.ignore then out[1] = "I" end
    for _, pair in ipairs(P.letters[f.code] or (P.readers[f.code] and {} or P.other_letters)) do
        if has(f, pair[1]) then out[#out + 1] = pair[2] end
    end
    return out
end

local function summary(f)
    local parts = { f.stream_text }
    local letters = flag_letters(f)
    if #letters > 0 then parts[#parts + 1] = table.concat(letters, " ") end
    if f.version then parts[#parts + 1] = "v" .. f.version end
    if f.n then parts[#parts + 1] = "n=" .. tostring(f.n) end
    if f.ttl then parts[#parts + 1] = "ttl=" .. tostring(f.ttl) .. ", count=" .. tostring(f.count) end
    if f.error_code then parts[#parts + 1] = ERROR_CODES[f.error_code] or format("0x%08x", f.error_code) end
    if f.setup_error_code then
        parts[#parts + 1] = DRAFT_SETUP_ERROR_CODES[f.setup_error_code] or format("0x%04x", f.setup_error_code)
    end
    local name = f.name == "UNKNOWN" and format("UNKNOWN[0x%02x]", f.code) or f.name
    local text = name .. "(" .. table.concat(parts, ", ") .. ")"
    if f.ignored then text = text .. " [ignored]" end
    return text
end

-- Labels of the fields that may be empty, shown as "(empty)" rather than Wireshark's <MISSING>.
local EMPTY = {
    [hf.metadata] = "Metadata", [hf.data] = "Data", [hf.ext_body] = "Extension body", [hf.token] = "Resume token",
    [hf.mime_metadata] = "Metadata MIME type", [hf.mime_data] = "Data MIME type",
}

-- Text fields are added with their value and label: given bytes alone, Wireshark flags a NUL inside
-- the text ("Trailing stray characters", a warning), and a NUL is legal in an error message or a MIME
-- field.  The label shows the whole text (invalid UTF-8 as U+FFFD), which can be longer than its bytes.
local TEXT = { [hf.mime_metadata] = "Metadata MIME type", [hf.mime_data] = "Data MIME type",
    [hf.error_message] = "Error message" }

-- The length of the valid UTF-8 sequence (strict, as Python decodes) starting at s[i], or nil.
local function utf8_sequence(s, i)
    local b, need, lo, hi = byte(s, i), nil, 0x80, 0xBF
    if b >= 0xC2 and b <= 0xDF then need = 1
    elseif b == 0xE0 then need, lo = 2, 0xA0
    elseif b == 0xED then need, hi = 2, 0x9F
    elseif b >= 0xE1 and b <= 0xEF then need = 2
    elseif b == 0xF0 then need, lo = 3, 0x90
    elseif b >= 0xF1 and b <= 0xF3 then need = 3
    elseif b == 0xF4 then need, hi = 3, 0x8F
    else return nil end
    if i + need > #s then return nil end
    local second = byte(s, i + 1)
    if second < lo or second > hi then return nil end
    for k = 2, need do
        local cont = byte(s, i + k)
        if cont < 0x80 or cont > 0xBF then return nil end
    end
    return need + 1
end

-- Bytes as text: valid UTF-8 kept, control characters and invalid bytes escaped (\xNN).
local function printable(s)
    local out, i = {}, 1
    while i <= #s do
        local b = byte(s, i)
        local n = b >= 0x80 and utf8_sequence(s, i) or 1
        if b >= 0x80 and n > 1 then
            out[#out + 1] = s:sub(i, i + n - 1)
        elseif b >= 0x20 and b < 0x7F then
            out[#out + 1] = string.char(b)
        else
            out[#out + 1] = format("\\x%02x", b)
        end
        i = i + n
    end
    return table.concat(out)
end

local function add_text(tree, field, range)
    local text = printable(range:raw())
    tree:add(field, range, text):set_text(TEXT[field] .. ": " .. text)
end

local function render(tree, tvb, f)
    local P = f.profile
    local root = tree:add(rsocket, tvb(f.at, f.len), "RSocket " .. summary(f))
    root:add(hf.profile, P.name):set_generated()
    if P == DRAFT then
        root:add(hf.length_draft, tvb(f.at, 4))
        root:add(hf.reserved_r, tvb(f.at, 4))
    else
        root:add(hf.length_v1, tvb(f.at, 3))
    end
    root:add(hf.frame_size, f.len):set_generated()
    if P == DRAFT then root:add(hf.version_draft, tvb(f.flags_at - 1, 1)) end
    if P == V1 then root:add(hf.stream_id, tvb(f.stream_at, f.stream_len)) end
    root:add(P == DRAFT and hf.type_draft or hf.type_v1, tvb(f.type_at, 2))
    root:add(hf.type_name, f.name):set_generated()
    local flags_len = P == DRAFT and 1 or 2
    local flags = root:add(P == DRAFT and hf.flags_draft or hf.flags_v1, tvb(f.flags_at, flags_len), f.flags)
    local letters = flag_letters(f)
    if #letters > 0 then flags:append_text(" (" .. table.concat(letters, " ") .. ")") end
    flags:add(P.ignore_field, tvb(f.flags_at, flags_len))
    for _, field in ipairs(P.flag_fields[f.code] or (P.readers[f.code] and {} or P.other_fields)) do
        flags:add(field, tvb(f.flags_at, flags_len))
    end
    if f.next ~= nil then flags:add(hf.next_implied, f.next):set_generated() end
    if P == DRAFT then root:add(hf.stream_id, tvb(f.stream_at, f.stream_len)) end
    if f.version then root:add(hf.version, f.version):set_generated() end
    for _, entry in ipairs(f.items) do
        if TEXT[entry.hf] and entry.len > 0 then
            add_text(root, entry.hf, tvb(entry.at, entry.len))
        elseif entry.len > 0 then
            root:add(entry.hf, tvb(entry.at, entry.len))
        else
            root:add(entry.hf, tvb(entry.at, 0)):set_text(EMPTY[entry.hf] .. ": (empty)")
        end
        if entry.hf == hf.error_code and f.error_code >= 0x301 and f.error_code <= 0xFFFFFFFE then
            root:add(hf.error_kind, "application-defined (0x00000301 to 0xFFFFFFFE)"):set_generated()
        end
        if entry.hf == hf.metadata then root:add(hf.metadata_size, entry.len):set_generated() end
        if entry.hf == hf.data then root:add(hf.data_size, entry.len):set_generated() end
    end
    if f.error_code_implied then
        root:add(hf.error_code, f.error_code):append_text(" (implied: the draft's ERROR carries no code)"):set_generated()
    end
    if f.message_at and f.message_at < f.at + f.len then
        add_text(root, hf.error_message, tvb(f.message_at, f.at + f.len - f.message_at))
    end
    if f.ignored then
        root:add(hf.ignored, f.ignored.rule):set_generated()
        root:add(hf.problem, f.ignored.reason):set_generated()
        root:add_proto_expert_info(ef_ignored, "RSocket frame to be ignored (" .. f.ignored.rule .. "): " .. f.ignored.reason)
    end
end

local function render_malformed(tree, tvb, failure, frame_at, limit)
    local item = tree:add(rsocket, tvb(frame_at, limit - frame_at), "RSocket malformed frame: " .. failure.problem)
    item:add(hf.rule, failure.rule):set_generated()
    item:add(hf.problem, failure.problem):set_generated()
    local bad_at = math.min(math.max(failure.at or frame_at, frame_at), limit - 1)
    local bad_len = math.max(math.min(failure.len or 1, limit - bad_at), 1)
    item:add_tvb_expert_info(ef_malformed, tvb(bad_at, bad_len),
        "Malformed RSocket frame (" .. failure.rule .. "): " .. failure.problem)
end

local INFO_FRAMES = 6 -- frames named in the Info column per dissection; the rest are counted

local function set_info(pinfo, names, more)
    if #names == 0 then return end
    local text = table.concat(names, ", ")
    if more > 0 then text = text .. ", ... (" .. more .. " more)" end
    if pinfo.private.rsocket_info then
        pinfo.cols.info:append(", " .. text)
    else
        pinfo.cols.info:set(text)
        pinfo.private.rsocket_info = "1"
    end
end

-- State -----------------------------------------------------------------------------------------

local AFTER_MALFORMED = "after a malformed frame in this direction"
local UNFRAMED = "frame boundaries lost (TCP reassembly is off)"
local MISSED_START = "this direction started before the stream was recognised (by its other direction)"
local NOT_SEEN = "not dissected in the first pass (before the stream was recognised)"

-- Streams are told apart by their endpoints (not tcp.stream: field values exist only when Wireshark
-- builds a tree, and tshark -2 dissects its first pass without one).
local streams = {} -- per TCP stream: {profile = V1|DRAFT|nil, dead = {[sender] = why its bytes are not decoded}}
local recorded = {} -- per packet: what the first pass found there; and the packets the heuristic took
local heuristic_tried = {} -- per stream and direction: whether the heuristic has judged its first bytes
local ws_taken = {} -- WebSocket, per stream and direction: whether its first message was RSocket (or false)

function rsocket.init()
    streams, recorded, heuristic_tried = {}, {}, {}
    ws_taken = {}
end

local function endpoints(pinfo)
    local sender = tostring(pinfo.src) .. "/" .. pinfo.src_port
    local receiver = tostring(pinfo.dst) .. "/" .. pinfo.dst_port
    return sender, (sender < receiver) and (sender .. " " .. receiver) or (receiver .. " " .. sender), receiver
end

local function stream_of(pinfo)
    local sender, key = endpoints(pinfo)
    local stream = streams[key]
    if stream == nil then
        stream = { profile = nil, dead = {} }
        streams[key] = stream
    end
    return stream, sender
end

-- Recognising a stream ------------------------------------------------------------------------

-- Whether the bytes at hand (maybe fewer than a header) agree with the start of a SETUP or RESUME of
-- profile P on stream id 0: 1.0 SETUP/RESUME with major version 1; a draft SETUP with version 0.
local function could_be_setup(raw, limit, P)
    local function at(i) return i < limit and byte(raw, i + 1) or nil end
    local function is(i, value) return i >= limit or byte(raw, i + 1) == value end
    if P == V1 then
        for i = 3, 6 do if not is(i, 0) then return false end end -- stream id 0
        local high = at(7) -- the type's 6 bits and two flag bits
        if high and floor(high / 4) ~= P.setup and floor(high / 4) ~= P.resume then return false end
        return is(9, 0) and is(10, 1)
    end
    if at(0) and at(0) > 1 then return false end -- no SETUP is longer than the kit's limit
    if not (is(4, 0) and is(6, 0) and is(7, P.setup)) then return false end
    for i = 8, 15 do if not is(i, 0) then return false end end
    return true
end

-- Whether bytes that start a direction begin a SETUP or RESUME of profile P: true, false, or nil when
-- the bytes at hand agree with one but are too few to tell.
local function starts_with_setup(raw, limit, P)
    if not could_be_setup(raw, limit, P) then return false end
    if limit < P.prefix + P.header + (P == V1 and 4 or 0) then return nil end
    local ok, size = pcall(P.body_size, raw, 0)
    return ok and size >= P.header and size <= MAX_FRAME
end

-- Whether the frames at the start of these bytes read as RSocket of profile P: the first whole, known
-- and on a plausible stream id, none malformed (the last may be cut off after the first).
local function reads_as_frames(raw, limit, P)
    local count, plausible = 0, true
    local c = { raw = raw, p = 0, limit = limit }
    local ok, failure = pcall(parse_frames, c, P, function(f)
        count = count + 1
        if count == 1 then
            if f.ignored or f.stream_n == nil then
                plausible = false
            elseif P.connection[f.code] and f.stream_n ~= 0 then
                plausible = false
            elseif P.stream[f.code] and f.stream_n == 0 then
                plausible = false
            end
        end
    end)
    if not ok and (type(failure) ~= "table" or failure.kind ~= INCOMPLETE) then
        if type(failure) ~= "table" then error(failure, 0) end
        return false
    end
    return plausible and count >= 1
end

-- The profile the first bytes of a direction are in: V1, DRAFT, false (neither), or nil (more bytes
-- needed).  SETUP/RESUME first; then any plausible frame.  The preferred profile is tried first.
local function sniff_profile(raw, limit, preferred)
    local order = preferred == DRAFT and { DRAFT, V1 } or { V1, DRAFT }
    local waiting = false
    for _, P in ipairs(order) do
        local setup = starts_with_setup(raw, limit, P)
        if setup then
            -- A whole SETUP must read without error; the start of a long one is taken as it is.
            local ok, failure = pcall(parse_frame, raw, 0, limit, P)
            if ok or (type(failure) == "table" and failure.kind == INCOMPLETE) then return P end
            if type(failure) ~= "table" then error(failure, 0) end
        elseif setup == nil then
            waiting = true
        end
    end
    for _, P in ipairs(order) do
        if reads_as_frames(raw, limit, P) then return P end
    end
    if waiting then return nil end
    return false
end

-- The dissector ---------------------------------------------------------------------------------

local function dissect(tvb, pinfo, tree)
    local limit = tvb:captured_len()
    if limit == 0 then return 0 end
    local stream, sender = stream_of(pinfo)
    local visited = pinfo.visited
    local raw = tvb:raw(0, limit)
    local preferred = PROFILES[rsocket.prefs.profile] or V1

    -- What the first pass found in this packet: true (decoded) or why its bytes are not.  Keyed by
    -- packet, not by tvb: a later pass may cut a packet's bytes differently (TCP then knows where the
    -- reassembled frames end).  A later pass shows only what the first one decoded: it may hand over
    -- bytes the first pass never saw (a stream's before it was recognised), which TCP no longer reassembles.
    local why
    if visited then
        why = recorded[pinfo.number]
        if why == nil then why = NOT_SEEN elseif why == true then why = nil end
    else
        why = stream.dead[sender]
        if recorded[pinfo.number] == nil then recorded[pinfo.number] = why or true end
    end
    if why then
        local item = tree:add(rsocket, tvb(0, limit), "RSocket: " .. limit .. " bytes not decoded: " .. why)
        item:add(hf.undecoded, tvb(0, limit))
        set_info(pinfo, { "[not decoded: " .. why .. "]" }, 0)
        return limit
    end

    if stream.profile == nil then
        local found = sniff_profile(raw, limit, preferred)
        if found == nil and pinfo.can_desegment > 0 then
            pinfo.desegment_offset, pinfo.desegment_len = 0, DESEGMENT_ONE_MORE_SEGMENT
            return limit
        end
        stream.profile = found or preferred
    end
    local P = stream.profile
    pinfo.cols.protocol = "RSocket"

    local names, more = {}, 0
    local function on_frame(f)
        render(tree, tvb, f)
        if #names < INFO_FRAMES then
            names[#names + 1] = summary(f)
        else
            more = more + 1
        end
    end
    local c = { raw = raw, p = 0, limit = limit }
    local ok, failure = pcall(parse_frames, c, P, on_frame)
    set_info(pinfo, names, more)
    if ok then return limit end
    if type(failure) ~= "table" then error(failure, 0) end -- a bug: let Wireshark show the Lua error
    local frame_at = c.frame_at or c.p
    if failure.kind == INCOMPLETE then
        if pinfo.can_desegment > 0 then
            pinfo.desegment_offset = frame_at
            pinfo.desegment_len = failure.reach and (failure.reach - limit) or DESEGMENT_ONE_MORE_SEGMENT
        else
            -- Without reassembly the next segment starts inside this frame: framing is lost for good.
            tree:add(rsocket, tvb(frame_at, limit - frame_at),
                "RSocket: frame continues beyond this segment (enable TCP reassembly to decode it)")
            if not visited then stream.dead[sender] = UNFRAMED end
        end
        return limit
    end
    render_malformed(tree, tvb, failure, frame_at, limit)
    set_info(pinfo, { "[malformed " .. failure.rule .. "]" }, 0)
    if not visited then stream.dead[sender] = AFTER_MALFORMED end
    return limit -- the rest of these bytes is the malformed frame or comes after it
end

rsocket.dissector = dissect

-- Recognition -----------------------------------------------------------------------------------

local HEURISTIC_WINDOW = 65536 -- bytes of a segment the heuristic reads at most

local function heuristic(tvb, pinfo, tree)
    local limit = math.min(tvb:captured_len(), HEURISTIC_WINDOW)
    if limit == 0 then return false end
    local accepted = "recognised at " .. pinfo.number
    if pinfo.visited then
        if not recorded[accepted] then return false end
    else
        -- Only the first bytes of each direction of each stream: TCP asks the heuristics about every
        -- segment of a stream no dissector has claimed, and only a direction's start is framed.
        local sender, key, receiver = endpoints(pinfo)
        local direction = key .. " from " .. sender
        if heuristic_tried[direction] then return false end
        heuristic_tried[direction] = true
        local found = sniff_profile(tvb:raw(0, limit), limit, PROFILES[rsocket.prefs.profile] or V1)
        -- Too few bytes to tell (nil) is taken only from 4 bytes on that agree with a SETUP's start.
        if found == false or (found == nil and limit < 4) then return false end
        local stream = stream_of(pinfo)
        if stream.profile == nil then stream.profile = found end
        -- The other direction, if it has already sent bytes, went by undecoded: what it sends from now
        -- on may start inside a frame, so it is not decoded rather than misread.
        if heuristic_tried[key .. " from " .. receiver] then stream.dead[receiver] = MISSED_START end
        recorded[accepted] = true
    end
    pinfo.conversation = rsocket
    dissect(tvb, pinfo, tree) -- directly: through rsocket.dissector, TCP reassembly would be off for this call
    return true
end

rsocket:register_heuristic("tcp", heuristic)

local tcp_port_table = DissectorTable.get("tcp.port")
local registered_port = 0

local function register_port()
    if registered_port ~= 0 then tcp_port_table:remove(registered_port, rsocket) end
    registered_port = rsocket.prefs.tcp_port
    if registered_port ~= 0 then tcp_port_table:add(registered_port, rsocket) end
end

function rsocket.prefs_changed()
    if registered_port ~= rsocket.prefs.tcp_port then register_port() end
end

register_port()
tcp_port_table:add_for_decode_as(rsocket)

-- Over WebSocket (RSocket's WebSocket transport: one frame per binary message, no length prefix).
-- Wireshark's WebSocket dissector recognises the connection by its HTTP Upgrade on any port and
-- hands each message's unmasked payload to the "ws" heuristics.  The frame is decoded as on TCP
-- from a new data source, "RSocket frame", which puts back the length prefix the transport left out
-- (shown as the frame length; it is not on the wire).

local function ws_prefix(P, size)
    local bytes = {}
    local value = P == DRAFT and size + P.prefix or size
    for i = P.prefix - 1, 0, -1 do bytes[#bytes + 1] = format("%02x", floor(value / 256 ^ i) % 256) end
    return ByteArray.new(table.concat(bytes))
end

local function ws_heuristic(tvb, pinfo, tree)
    local size = tvb:captured_len()
    if size == 0 or size > MAX_FRAME then return false end
    local stream = stream_of(pinfo)
    local sender, key = endpoints(pinfo)
    local direction = key .. " from " .. sender
    if pinfo.visited then
        if not recorded["ws " .. pinfo.number] then return false end
    elseif ws_taken[direction] == false then
        return false -- a direction is recognised by its first message only, as on TCP
    end
    local P = stream.profile
    if P == nil or ws_taken[direction] == nil then
        local framed = ws_prefix(V1, size) .. tvb:bytes()
        local found = sniff_profile(framed:raw(), framed:len(), PROFILES[rsocket.prefs.profile] or V1)
        if not found then
            framed = ws_prefix(DRAFT, size) .. tvb:bytes()
            found = sniff_profile(framed:raw(), framed:len(), DRAFT)
        end
        if not pinfo.visited then ws_taken[direction] = found and true or false end
        if not found then return false end
        stream.profile = stream.profile or found
        P = stream.profile
    end
    if not pinfo.visited then recorded["ws " .. pinfo.number] = true end
    local framed = ws_prefix(P, size) .. tvb:bytes()
    dissect(framed:tvb("RSocket frame"), pinfo, tree)
    return true
end

rsocket:register_heuristic("ws", ws_heuristic)
