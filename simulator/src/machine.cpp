#include "nbr/simulator/machine.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <google/protobuf/util/json_util.h>

#include "nbr/common/json_text.hpp"
#include "nbr/schema/file_io.hpp"

namespace nbr::simulator {

namespace internal {
/// Built-in machine files (generated from simulator/machines/*.json): name -> JSON text.
const std::map<std::string, std::string>& machine_presets();
}  // namespace internal

namespace {

constexpr double kPsPerUs = 1e6;
constexpr double kPsPerNs = 1e3;

class Checker {
public:
    explicit Checker(const std::string& source) : source_(source) {}

    [[noreturn]] void fail(const std::string& what) const { throw MachineError(source_ + ": " + what); }

    /// A non-negative finite value; `required` values must be present.
    template <class Message, class Has, class Get>
    double value(const Message& m, const std::string& field, Has has, Get get, bool required) const {
        if (!(m.*has)()) {
            if (required) fail("'" + field + "' is required");
            return 0;
        }
        const double v = (m.*get)();
        if (!std::isfinite(v) || v < 0) fail("'" + field + "' must be a non-negative number");
        return v;
    }

private:
    const std::string& source_;
};

/// A segment's own CPU overheads.
void read_segment_overheads(const schema::SizeSegment& s, const std::string& q, const Checker& check,
                            SizeSegment& segment) {
    using S = schema::SizeSegment;
    if (s.has_send_overhead_us()) {
        segment.send_overhead_ps =
            check.value(s, q + "send_overhead_us", &S::has_send_overhead_us, &S::send_overhead_us, true) * kPsPerUs;
    }
    if (s.has_recv_overhead_us()) {
        segment.recv_overhead_ps =
            check.value(s, q + "recv_overhead_us", &S::has_recv_overhead_us, &S::recv_overhead_us, true) * kPsPerUs;
    }
    if (s.has_exchange_byte_time_ns()) {
        segment.exchange_byte_ps = check.value(s, q + "exchange_byte_time_ns", &S::has_exchange_byte_time_ns,
                                               &S::exchange_byte_time_ns, true) *
                                   kPsPerNs;
    }
}

LinkCost link_cost(const schema::LinkClass& spec, const std::string& name, const Checker& check) {
    using L = schema::LinkClass;
    LinkCost c;
    const std::string p = name + ".";
    c.latency_ps = check.value(spec, p + "latency_us", &L::has_latency_us, &L::latency_us, true) * kPsPerUs;
    c.send_overhead_ps =
        check.value(spec, p + "send_overhead_us", &L::has_send_overhead_us, &L::send_overhead_us, true) * kPsPerUs;
    c.recv_overhead_ps =
        check.value(spec, p + "recv_overhead_us", &L::has_recv_overhead_us, &L::recv_overhead_us, true) * kPsPerUs;
    c.byte_ps = check.value(spec, p + "byte_time_ns", &L::has_byte_time_ns, &L::byte_time_ns, true) * kPsPerNs;
    c.gap_ps = check.value(spec, p + "gap_us", &L::has_gap_us, &L::gap_us, false) * kPsPerUs;
    c.send_byte_ps = check.value(spec, p + "send_byte_overhead_ns", &L::has_send_byte_overhead_ns,
                                 &L::send_byte_overhead_ns, false) *
                     kPsPerNs;
    c.recv_byte_ps = check.value(spec, p + "recv_byte_overhead_ns", &L::has_recv_byte_overhead_ns,
                                 &L::recv_byte_overhead_ns, false) *
                     kPsPerNs;
    if (spec.has_eager_limit_bytes()) c.eager_limit = spec.eager_limit_bytes();
    c.concurrent_injection = spec.concurrent_injection();
    c.post_recv_ps = check.value(spec, p + "post_recv_overhead_us", &L::has_post_recv_overhead_us,
                                 &L::post_recv_overhead_us, false) *
                     kPsPerUs;
    if (spec.has_ack_latency_us()) {
        c.ack_ps = check.value(spec, p + "ack_latency_us", &L::has_ack_latency_us, &L::ack_latency_us, true) * kPsPerUs;
    }
    c.eager_buffer = spec.eager_buffer_bytes();
    c.eager_buffer_message = spec.eager_buffer_message_bytes();
    c.overflow_recv_ps = check.value(spec, p + "overflow_recv_overhead_us", &L::has_overflow_recv_overhead_us,
                                     &L::overflow_recv_overhead_us, false) *
                         kPsPerUs;
    std::uint64_t previous = 0;
    for (int i = 0; i < spec.segments_size(); ++i) {
        const auto& s = spec.segments(i);
        const std::string q = p + "segments[" + std::to_string(i) + "].";
        if (i > 0 && s.from_bytes() <= previous) check.fail(q + "from_bytes must increase");
        previous = s.from_bytes();
        SizeSegment segment{s.from_bytes(),     c.latency_ps,       c.byte_ps, c.ack_ps,
                            c.send_overhead_ps, c.recv_overhead_ps, -1};
        if (s.has_latency_us()) {
            segment.latency_ps = check.value(s, q + "latency_us", &schema::SizeSegment::has_latency_us,
                                             &schema::SizeSegment::latency_us, true) *
                                 kPsPerUs;
        }
        if (s.has_byte_time_ns()) {
            segment.byte_ps = check.value(s, q + "byte_time_ns", &schema::SizeSegment::has_byte_time_ns,
                                          &schema::SizeSegment::byte_time_ns, true) *
                              kPsPerNs;
        }
        if (s.has_ack_latency_us()) {
            segment.ack_ps = check.value(s, q + "ack_latency_us", &schema::SizeSegment::has_ack_latency_us,
                                         &schema::SizeSegment::ack_latency_us, true) *
                             kPsPerUs;
        }
        read_segment_overheads(s, q, check, segment);
        c.segments.push_back(segment);
    }
    return c;
}

std::string read_text(const std::string& path) {
    try {
        return read_regular_file(path);
    } catch (const FileError& error) {
        throw MachineError(std::string(error.what()) + " (machine file)");
    }
}

std::string preset_list() {
    return common::internal::join(machine_preset_names());
}

}  // namespace

const char* to_string(DistanceClass c) {
    switch (c) {
        case DistanceClass::socket: return "socket";
        case DistanceClass::node: return "node";
        case DistanceClass::leaf: return "leaf";
        case DistanceClass::network: return "network";
    }
    return "?";
}

const SizeSegment* LinkCost::segment_for(std::uint64_t bytes) const {
    if (segments.empty() || bytes < segments.front().from_bytes) return nullptr;
    auto it = std::upper_bound(segments.begin(), segments.end(), bytes,
                               [](std::uint64_t b, const SizeSegment& s) { return b < s.from_bytes; });
    return &*std::prev(it);
}

std::pair<double, double> LinkCost::latency_and_byte_ps(std::uint64_t bytes) const {
    const SizeSegment* s = segment_for(bytes);
    return s == nullptr ? std::pair{latency_ps, byte_ps} : std::pair{s->latency_ps, s->byte_ps};
}

double LinkCost::exchange_byte_ps_at(std::uint64_t bytes) const {
    const SizeSegment* s = segment_for(bytes);
    if (s == nullptr) return byte_ps;
    return s->exchange_byte_ps >= 0 ? s->exchange_byte_ps : s->byte_ps;
}

double LinkCost::send_overhead_at(std::uint64_t bytes) const {
    const SizeSegment* s = segment_for(bytes);
    return s == nullptr ? send_overhead_ps : s->send_overhead_ps;
}

double LinkCost::recv_overhead_at(std::uint64_t bytes) const {
    const SizeSegment* s = segment_for(bytes);
    return s == nullptr ? recv_overhead_ps : s->recv_overhead_ps;
}

double LinkCost::ack_after_receive_ps(std::uint64_t bytes) const {
    if (bytes <= eager_limit) return -1;
    const SizeSegment* s = segment_for(bytes);
    return s == nullptr ? ack_ps : s->ack_ps;
}

double ratio_error_over(const std::vector<RatioPoint>& points, double overall, std::uint64_t lo, std::uint64_t hi) {
    if (hi < lo) std::swap(lo, hi);
    if (points.empty()) return overall;
    hi = std::min(hi, points.back().bytes);  // beyond the last check: the last
    lo = std::min(lo, hi);
    const auto below = [](std::uint64_t bytes, const RatioPoint& p) { return bytes < p.bytes; };
    auto first = std::upper_bound(points.begin(), points.end(), lo, below);  // the first above lo
    if (first != points.begin()) --first;                                    // the last at or below lo
    auto last = std::lower_bound(points.begin(), points.end(), hi,
                                 [](const RatioPoint& p, std::uint64_t bytes) { return p.bytes < bytes; });
    double worst = 0;
    for (auto p = first; p <= last; ++p) worst = std::max(worst, p->error);
    return worst;
}

double copy_byte_ps_at(const std::vector<CopyRatePoint>& points, double fallback, std::uint64_t block_bytes) {
    if (points.empty()) return fallback;
    if (block_bytes <= points.front().block_bytes) return points.front().byte_ps;
    if (block_bytes >= points.back().block_bytes) return points.back().byte_ps;
    const auto above = std::upper_bound(points.begin(), points.end(), block_bytes,
                                        [](std::uint64_t b, const CopyRatePoint& p) { return b < p.block_bytes; });
    const auto below = std::prev(above);
    const double span = std::log2(static_cast<double>(above->block_bytes) / static_cast<double>(below->block_bytes));
    const double at = std::log2(static_cast<double>(block_bytes) / static_cast<double>(below->block_bytes)) / span;
    return below->byte_ps + at * (above->byte_ps - below->byte_ps);
}

std::vector<std::string> machine_preset_names() {
    std::vector<std::string> names;
    for (const auto& [name, json] : internal::machine_presets()) names.push_back(name);
    return names;
}

namespace {

bool has_ack(const schema::LinkClass& link) {
    return link.has_ack_latency_us() || std::any_of(link.segments().begin(), link.segments().end(),
                                                    [](const auto& s) { return s.has_ack_latency_us(); });
}

bool has_format8(const schema::LinkClass& link) {
    return std::any_of(link.segments().begin(), link.segments().end(),
                       [](const auto& s) { return s.has_send_overhead_us() || s.has_recv_overhead_us(); });
}

bool has_exchange_byte_time(const schema::LinkClass& link) {
    return std::any_of(link.segments().begin(), link.segments().end(),
                       [](const auto& s) { return s.has_exchange_byte_time_ns(); });
}

bool has_format7(const schema::LinkClass& link) {
    return link.has_eager_buffer_bytes() || link.has_eager_buffer_message_bytes() ||
           link.has_overflow_recv_overhead_us();
}

/// Whether any of the machine's distance classes has what `has` looks for.
template <typename Has>
bool any_class(const schema::Machine& spec, Has has) {
    return has(spec.socket()) || has(spec.node()) || has(spec.network()) || has(spec.leaf());
}

/// A newer format's fields in an older file are an error, not silently ignored.
void check_format(const schema::Machine& spec, const Checker& check) {
    if (spec.format_version() == 0) check.fail("'format_version' is required");
    if (spec.format_version() > kMachineFormatVersion) {
        check.fail("format_version " + std::to_string(spec.format_version()) + " is newer than this build reads (" +
                   std::to_string(kMachineFormatVersion) + ")");
    }
    const auto needs = [&](std::uint32_t format, bool present, const std::string& field) {
        if (present && spec.format_version() < format) {
            check.fail("'" + field + "' needs format_version " + std::to_string(format));
        }
    };
    needs(2, spec.has_call_overhead_us(), "call_overhead_us");
    needs(2, spec.cores_per_node() > 0, "cores_per_node");
    needs(2, spec.has_switch_us(), "switch_us");
    needs(2, any_class(spec, [](const auto& c) { return c.has_post_recv_overhead_us(); }), "post_recv_overhead_us");
    needs(3, spec.uplinks_per_switch() > 0, "uplinks_per_switch");
    needs(3, spec.has_uplink(), "uplink");
    needs(4, spec.nic_sharing() != schema::FIRST_COME, "nic_sharing");
    needs(5, spec.nic_send_sharing() != schema::FIRST_COME, "nic_send_sharing");
    needs(4, any_class(spec, [](const auto& c) { return c.concurrent_injection(); }), "concurrent_injection");
    needs(6, any_class(spec, has_ack), "ack_latency_us");
    needs(7, any_class(spec, has_format7), "eager_buffer_bytes or overflow_recv_overhead_us");
    needs(8, any_class(spec, has_format8), "segments[].send_overhead_us or recv_overhead_us");
    needs(8, spec.has_copy_block_ns(), "copy_block_ns");
    needs(9, spec.has_ratio_error(), "ratio_error");
    needs(10, spec.ratio_errors_size() > 0, "ratio_errors");
    needs(11, spec.copy_rates_size() > 0, "copy_rates");
    needs(12, any_class(spec, has_exchange_byte_time), "segments[].exchange_byte_time_ns");
    needs(13, spec.has_noise(), "noise");
}

/// The cluster's noise (non-negative, no detour longer than its period).
void read_noise(const schema::Machine& spec, const Checker& check, Machine& m) {
    if (!spec.has_noise()) return;
    const auto& n = spec.noise();
    if (!std::isfinite(n.frequency_hz()) || !std::isfinite(n.duration_us()) || n.frequency_hz() < 0 ||
        n.duration_us() < 0) {
        check.fail("'noise.frequency_hz' and 'noise.duration_us' must be non-negative numbers");
    }
    const double longest = n.spread() == schema::UNIFORM ? 2 * n.duration_us() : n.duration_us();
    if (longest * 1e-6 * n.frequency_hz() > 1) check.fail("'noise': detours longer than their period");
    m.noise.frequency_hz = n.frequency_hz();
    m.noise.duration_us = n.duration_us();
    m.noise.spread = n.spread() == schema::UNIFORM       ? Spread::uniform
                     : n.spread() == schema::EXPONENTIAL ? Spread::exponential
                                                         : Spread::fixed;
    m.noise.coscheduled = n.coscheduled();
}

/// A point's size in a list of increasing sizes: positive and above `before` (0 for the first).
void check_size(const Checker& check, const std::string& field, std::uint64_t bytes, std::uint64_t before) {
    if (bytes <= before) check.fail("'" + field + "' must be positive and larger than the point before");
}

/// The copy per byte by block size (increasing sizes, non-negative rates).
void read_copy_rates(const schema::Machine& spec, const Checker& check, Machine& m) {
    for (int i = 0; i < spec.copy_rates_size(); ++i) {
        const auto& point = spec.copy_rates(i);
        const std::string field = "copy_rates[" + std::to_string(i) + "]";
        check_size(check, field + ".block_bytes", point.block_bytes(),
                   i > 0 ? spec.copy_rates(i - 1).block_bytes() : 0);
        if (!std::isfinite(point.ns_per_byte()) || point.ns_per_byte() < 0) {
            check.fail("'" + field + ".ns_per_byte' must be a non-negative number");
        }
        m.copy_rates.push_back(CopyRatePoint{point.block_bytes(), point.ns_per_byte() * kPsPerNs});
    }
}

/// The ratio error, and per block size (increasing, each within the whole).
void read_ratio_errors(const schema::Machine& spec, const Checker& check, Machine& m) {
    m.ratio_error =
        check.value(spec, "ratio_error", &schema::Machine::has_ratio_error, &schema::Machine::ratio_error, false);
    if (m.ratio_error >= 10) check.fail("'ratio_error' must be below 10");
    if (spec.ratio_errors_size() > 0 && !spec.has_ratio_error()) check.fail("'ratio_errors' needs 'ratio_error'");
    for (int i = 0; i < spec.ratio_errors_size(); ++i) {
        const auto& point = spec.ratio_errors(i);
        const std::string field = "ratio_errors[" + std::to_string(i) + "]";
        check_size(check, field + ".bytes", point.bytes(), i > 0 ? spec.ratio_errors(i - 1).bytes() : 0);
        if (!std::isfinite(point.error()) || point.error() < 0 || point.error() > m.ratio_error) {
            check.fail("'" + field + ".error' must lie in [0, ratio_error]");
        }
        m.ratio_errors.push_back(RatioPoint{point.bytes(), point.error()});
    }
}

/// The leaf switches' uplinks, which need the switch level.
void read_uplinks(const schema::Machine& spec, const Checker& check, Machine& m) {
    if ((spec.uplinks_per_switch() > 0) != spec.has_uplink()) {
        check.fail("'uplinks_per_switch' and 'uplink' go together");
    }
    if (spec.uplinks_per_switch() == 0) return;
    if (spec.nodes_per_switch() == 0) check.fail("'uplinks_per_switch' needs 'nodes_per_switch'");
    using N = schema::Nic;
    m.uplinks_per_switch = spec.uplinks_per_switch();
    m.uplink_gap_ps = check.value(spec.uplink(), "uplink.gap_us", &N::has_gap_us, &N::gap_us, false) * kPsPerUs;
    m.uplink_byte_ps =
        check.value(spec.uplink(), "uplink.byte_time_ns", &N::has_byte_time_ns, &N::byte_time_ns, true) * kPsPerNs;
}

}  // namespace

Machine machine_from_spec(const schema::Machine& spec, const std::string& source) {
    const Checker check(source);
    check_format(spec, check);
    if (spec.ranks_per_node() == 0 || spec.ranks_per_socket() == 0) {
        check.fail("'ranks_per_node' and 'ranks_per_socket' are required and positive");
    }
    if (spec.ranks_per_socket() > spec.ranks_per_node()) check.fail("'ranks_per_socket' exceeds 'ranks_per_node'");
    if (!spec.has_socket() || !spec.has_node() || !spec.has_network()) {
        check.fail("the distance classes 'socket', 'node' and 'network' are required");
    }
    if ((spec.nodes_per_switch() > 0) != spec.has_leaf()) {
        check.fail("'nodes_per_switch' and the 'leaf' class go together");
    }
    Machine m;
    m.name = spec.name().empty() ? source : spec.name();
    m.description = spec.description();
    m.ranks_per_node = spec.ranks_per_node();
    m.ranks_per_socket = spec.ranks_per_socket();
    m.copy_byte_ps = check.value(spec, "copy_ns_per_byte", &schema::Machine::has_copy_ns_per_byte,
                                 &schema::Machine::copy_ns_per_byte, false) *
                     kPsPerNs;
    m.copy_block_ps = check.value(spec, "copy_block_ns", &schema::Machine::has_copy_block_ns,
                                  &schema::Machine::copy_block_ns, false) *
                      kPsPerNs;
    read_copy_rates(spec, check, m);
    m.link[static_cast<std::size_t>(DistanceClass::socket)] = link_cost(spec.socket(), "socket", check);
    m.link[static_cast<std::size_t>(DistanceClass::node)] = link_cost(spec.node(), "node", check);
    m.link[static_cast<std::size_t>(DistanceClass::network)] = link_cost(spec.network(), "network", check);
    m.link[static_cast<std::size_t>(DistanceClass::leaf)] =
        spec.has_leaf() ? link_cost(spec.leaf(), "leaf", check) : m.cost(DistanceClass::network);
    m.nodes_per_switch = spec.nodes_per_switch();
    using N = schema::Nic;
    m.nic_gap_ps = check.value(spec.nic(), "nic.gap_us", &N::has_gap_us, &N::gap_us, false) * kPsPerUs;
    m.nic_byte_ps =
        check.value(spec.nic(), "nic.byte_time_ns", &N::has_byte_time_ns, &N::byte_time_ns, false) * kPsPerNs;
    m.call_ps = check.value(spec, "call_overhead_us", &schema::Machine::has_call_overhead_us,
                            &schema::Machine::call_overhead_us, false) *
                kPsPerUs;
    m.cores_per_node = spec.cores_per_node();
    m.switch_ps =
        check.value(spec, "switch_us", &schema::Machine::has_switch_us, &schema::Machine::switch_us, false) * kPsPerUs;
    read_uplinks(spec, check, m);
    m.nic_sharing = spec.nic_sharing() == schema::FAIR ? NicSharing::fair : NicSharing::first_come;
    m.nic_send_sharing = spec.nic_send_sharing() == schema::FAIR ? NicSharing::fair : NicSharing::first_come;
    read_ratio_errors(spec, check, m);
    read_noise(spec, check, m);
    m.sources.assign(spec.sources().begin(), spec.sources().end());
    m.spec = spec;
    return m;
}

Machine parse_machine(const std::string& json, const std::string& source) {
    schema::Machine spec;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto status = google::protobuf::util::JsonStringToMessage(json, &spec, options);
    if (!status.ok()) {
        throw MachineError(source +
                           ": not a valid machine file: " + nbr::internal::excerpt(status.message().as_string(), 200));
    }
    return machine_from_spec(spec, source);
}

Machine load_machine(const std::string& name_or_path) {
    const auto& presets = internal::machine_presets();
    if (const auto it = presets.find(name_or_path); it != presets.end()) {
        return parse_machine(it->second, "preset " + name_or_path);
    }
    if (!std::filesystem::exists(name_or_path)) {
        throw MachineError("unknown machine '" + name_or_path + "': neither a preset (" + preset_list() +
                           ") nor a file");
    }
    return parse_machine(read_text(name_or_path), name_or_path);
}

std::string machine_to_json(const schema::Machine& spec) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(spec, &json, options);
    return json;
}

std::string checked_machine_json(const schema::Machine& spec, const std::string& source) {
    auto json = machine_to_json(spec);
    (void)parse_machine(json, source);
    return json;
}

void save_machine(const std::string& path, const schema::Machine& spec) {
    replace_whole_file(path, checked_machine_json(spec, path));
}

std::uint64_t segment_size_for(const Machine& machine) {
    const LinkCost& network = machine.cost(DistanceClass::network);
    const double byte_ps = std::max(network.byte_ps, machine.nic_byte_ps);
    if (!(byte_ps > 0)) return 0;
    const double fixed_ps = network.latency_ps + network.send_overhead_ps + network.recv_overhead_ps;
    const double bytes = std::clamp(fixed_ps / byte_ps, 1024.0, 1048576.0);
    return std::bit_ceil(static_cast<std::uint64_t>(std::ceil(bytes)));
}

}  // namespace nbr::simulator
