#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbr {

/// @brief Where each rank runs: its node and its socket on that node.
///
/// Shared by the simulator (`nbrc simulate`) and the placement-aware algorithms. Built
/// either as block placement (ranks fill nodes in order, sockets within a node in order,
/// as `mpirun --map-by core` does) or from a placement file (docs/format.md):
///
///     # nbr placement: rank node socket [extra columns ignored]
///     0 0 0
///     1 0 1
///     2 1 0
///
/// Every rank appears exactly once; node and socket numbers are arbitrary non-negative
/// integers (only equality matters). Columns after the third are reserved (the capture
/// library writes NUMA domain and core there) and ignored.
class Placement {
public:
    /// @brief Block placement: `ranks_per_node` consecutive ranks per node, and within a
    /// node `ranks_per_socket` consecutive ranks per socket. The last node may be partial.
    /// @throws InputError if a count is zero or ranks_per_socket exceeds ranks_per_node.
    static Placement block(std::uint32_t num_ranks, std::uint32_t ranks_per_node, std::uint32_t ranks_per_socket);

    /// @brief Reads a placement file for `num_ranks` ranks (a `# ranks N` line, if present,
    /// must agree). @throws InputError naming file and line.
    static Placement read(const std::string& path, std::uint32_t num_ranks);

    /// @brief Parses placement-file text as read() does; `source` names it in messages.
    static Placement parse(std::string_view text, const std::string& source, std::uint32_t num_ranks);

    /// @brief A placement from every rank's node and socket ids (equal sizes), as a program that
    /// found them out itself has them. @throws InputError if the sizes differ.
    static Placement from_lists(std::vector<std::uint32_t> node, std::vector<std::uint32_t> socket,
                                std::string description);
    /// @brief Writes a placement file that read() gives back.
    void write(const std::string& path, const std::string& comment = {}) const;

    [[nodiscard]] std::uint32_t num_ranks() const noexcept { return static_cast<std::uint32_t>(node_.size()); }
    /// @brief Throws std::invalid_argument ("USER: the placement has P ranks, the topology N")
    /// unless the placement has `ranks` ranks.
    void require_ranks(std::uint32_t ranks, const std::string& user) const;
    [[nodiscard]] std::uint32_t node(std::uint32_t rank) const { return node_[rank]; }
    [[nodiscard]] std::uint32_t socket(std::uint32_t rank) const { return socket_[rank]; }
    /// @brief Number of distinct nodes (node ids are renumbered densely in order of first use).
    [[nodiscard]] std::uint32_t num_nodes() const noexcept { return num_nodes_; }
    [[nodiscard]] bool same_node(std::uint32_t a, std::uint32_t b) const { return node_[a] == node_[b]; }
    [[nodiscard]] bool same_socket(std::uint32_t a, std::uint32_t b) const {
        return node_[a] == node_[b] && socket_[a] == socket_[b];
    }
    /// @brief Largest number of ranks on one node and on one socket.
    [[nodiscard]] std::uint32_t max_ranks_per_node() const;
    [[nodiscard]] std::uint32_t max_ranks_per_socket() const;
    /// @brief The placement with every socket a node of its own (the sockets keep their ids):
    /// what aggregation by socket treats as nodes. A socket with fewer than half the ranks of
    /// the largest socket joins the one before it on its node (or after it, if it is the
    /// node's first), so that no group is much smaller than the others.
    [[nodiscard]] Placement socket_groups() const;
    /// @brief Short description for reports and manifests ("block 32/16" or "file NAME").
    [[nodiscard]] const std::string& description() const noexcept { return description_; }

private:
    Placement(std::vector<std::uint32_t> node, std::vector<std::uint32_t> socket, std::string description);

    std::vector<std::uint32_t> node_;    // dense node id per rank
    std::vector<std::uint32_t> socket_;  // socket id within the node per rank
    std::uint32_t num_nodes_ = 0;
    std::string description_;
};

}  // namespace nbr
