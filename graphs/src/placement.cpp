#include "nbr/graphs/placement.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "text_input.hpp"

namespace nbr {

namespace {

using internal::fields_of;
using internal::LineReader;
using internal::parse_unsigned;
using internal::where;

constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();

/// Largest number of ranks sharing one key.
template <class Key>
std::uint32_t max_share(std::uint32_t n, Key key) {
    std::unordered_map<std::uint64_t, std::uint32_t> count;
    std::uint32_t best = 0;
    for (std::uint32_t r = 0; r < n; ++r) best = std::max(best, ++count[key(r)]);
    return best;
}

/// Handles a `# ranks N` comment: it must agree with the expected rank count.
void check_ranks_directive(std::string_view comment, const std::string& path, std::size_t line, std::uint32_t n) {
    const auto fields = fields_of(comment);
    if (fields.size() != 2 || fields[0] != "ranks") return;
    std::uint32_t declared = 0;
    if (!parse_unsigned(fields[1], declared) || declared != n) {
        throw InputError(where(path, line) + "'# ranks " + internal::excerpt(fields[1]) + "' but the pattern has " +
                         std::to_string(n) + " ranks");
    }
}

}  // namespace

Placement::Placement(std::vector<std::uint32_t> node, std::vector<std::uint32_t> socket, std::string description)
    : node_(std::move(node)), socket_(std::move(socket)), description_(std::move(description)) {
    // Dense node ids in order of first use, so that node() can index per-node arrays.
    std::unordered_map<std::uint32_t, std::uint32_t> dense;
    for (auto& id : node_) id = dense.try_emplace(id, static_cast<std::uint32_t>(dense.size())).first->second;
    num_nodes_ = static_cast<std::uint32_t>(dense.size());
}

Placement Placement::block(std::uint32_t num_ranks, std::uint32_t ranks_per_node, std::uint32_t ranks_per_socket) {
    if (ranks_per_node == 0 || ranks_per_socket == 0) {
        throw InputError("placement: ranks per node and per socket must be positive");
    }
    if (ranks_per_socket > ranks_per_node) {
        throw InputError("placement: " + std::to_string(ranks_per_socket) + " ranks per socket exceed " +
                         std::to_string(ranks_per_node) + " ranks per node");
    }
    std::vector<std::uint32_t> node(num_ranks), socket(num_ranks);
    for (std::uint32_t r = 0; r < num_ranks; ++r) {
        node[r] = r / ranks_per_node;
        socket[r] = (r % ranks_per_node) / ranks_per_socket;
    }
    return {std::move(node), std::move(socket),
            "block " + std::to_string(ranks_per_node) + "/node " + std::to_string(ranks_per_socket) + "/socket"};
}

Placement Placement::from_lists(std::vector<std::uint32_t> node, std::vector<std::uint32_t> socket,
                                std::string description) {
    if (node.size() != socket.size()) throw InputError("placement: node and socket lists differ in length");
    return {std::move(node), std::move(socket), std::move(description)};
}

Placement Placement::read(const std::string& path, std::uint32_t num_ranks) {
    return parse(internal::load(path), path, num_ranks);
}

Placement Placement::parse(std::string_view text, const std::string& path, std::uint32_t num_ranks) {
    LineReader lines(text);
    std::string_view line;
    std::vector<std::uint32_t> node(num_ranks, kUnset), socket(num_ranks, kUnset);
    while (lines.next(line)) {
        const auto hash = line.find('#');
        if (hash != std::string_view::npos) {
            check_ranks_directive(line.substr(hash + 1), path, lines.number(), num_ranks);
            line = line.substr(0, hash);
        }
        const auto fields = fields_of(line);
        if (fields.empty()) continue;
        std::uint32_t rank = 0, n = 0, s = 0;
        if (fields.size() < 3 || !parse_unsigned(fields[0], rank) || !parse_unsigned(fields[1], n) ||
            !parse_unsigned(fields[2], s) || n == kUnset || s == kUnset) {
            throw InputError(where(path, lines.number()) +
                             "expected 'rank node socket' (non-negative integers), found '" + internal::excerpt(line) +
                             "'");
        }
        if (rank >= num_ranks) {
            throw InputError(where(path, lines.number()) + "rank " + std::to_string(rank) + " out of range [0, " +
                             std::to_string(num_ranks) + ")");
        }
        if (node[rank] != kUnset) {
            throw InputError(where(path, lines.number()) + "rank " + std::to_string(rank) + " placed twice");
        }
        node[rank] = n;
        socket[rank] = s;
    }
    const auto missing = std::find(node.begin(), node.end(), kUnset);
    if (missing != node.end()) {
        throw InputError(path + ": rank " + std::to_string(missing - node.begin()) + " is not placed (the file must " +
                         "place all " + std::to_string(num_ranks) + " ranks)");
    }
    return {std::move(node), std::move(socket), "file " + path};
}

void Placement::write(const std::string& path, const std::string& comment) const {
    std::ofstream out(path);
    if (!out) throw InputError(path + ": cannot create file");
    if (!comment.empty()) out << "# " << comment << "\n";
    out << "# nbr placement: rank node socket\n# ranks " << num_ranks() << "\n";
    for (std::uint32_t r = 0; r < num_ranks(); ++r) out << r << ' ' << node_[r] << ' ' << socket_[r] << '\n';
    out.close();
    if (!out) throw InputError(path + ": write error");
}

void Placement::require_ranks(std::uint32_t ranks, const std::string& user) const {
    if (num_ranks() == ranks) return;
    throw std::invalid_argument(user + ": the placement has " + std::to_string(num_ranks()) + " ranks, the topology " +
                                std::to_string(ranks));
}

std::uint32_t Placement::max_ranks_per_node() const {
    return max_share(num_ranks(), [&](std::uint32_t r) { return std::uint64_t{node_[r]}; });
}

std::uint32_t Placement::max_ranks_per_socket() const {
    return max_share(num_ranks(), [&](std::uint32_t r) { return (std::uint64_t{node_[r]} << 32) | socket_[r]; });
}

Placement Placement::socket_groups() const {
    const std::uint32_t largest = max_ranks_per_socket();
    // Per node, its sockets in order of first use: (socket, ranks on it).
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> sockets(num_nodes_);
    std::unordered_map<std::uint64_t, std::uint32_t> position;  // (node, socket) -> index in sockets[node]
    const auto key = [&](std::uint32_t r) { return (std::uint64_t{node_[r]} << 32) | socket_[r]; };
    for (std::uint32_t r = 0; r < num_ranks(); ++r) {
        auto& list = sockets[node_[r]];
        const auto [it, added] = position.try_emplace(key(r), static_cast<std::uint32_t>(list.size()));
        if (added) list.emplace_back(socket_[r], 0);
        ++list[it->second].second;
    }
    // Group ids, dense over all nodes: a small socket joins the node's group before it, and a
    // small group the socket after it.
    std::unordered_map<std::uint64_t, std::uint32_t> group;
    std::uint32_t groups = 0;
    for (std::uint32_t n = 0; n < num_nodes_; ++n) {
        std::uint32_t open = 0;  // ranks in the node's last group
        for (const auto& [socket, size] : sockets[n]) {
            if (open == 0 || (2 * size >= largest && 2 * open >= largest)) {
                ++groups;
                open = 0;
            }
            group[(std::uint64_t{n} << 32) | socket] = groups - 1;
            open += size;
        }
    }
    std::vector<std::uint32_t> node(num_ranks());
    for (std::uint32_t r = 0; r < num_ranks(); ++r) node[r] = group.at(key(r));
    return {std::move(node), socket_, description_ + " by socket"};
}

}  // namespace nbr
