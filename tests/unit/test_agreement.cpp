// What rank 0 of a new topology communicator broadcasts to every rank under the drop-in
// (interpose/agreement.cpp): its settings survive the text exactly, whatever bytes the
// environment holds, and text the encoder did not write is refused, not read by position.
#include <string>

#include <gtest/gtest.h>

#include "agreement.hpp"

namespace {

using nbr::interpose::Agreed;
using nbr::interpose::decode_agreed;
using nbr::interpose::encode_agreed;

Agreed sample() {
    Agreed agreed;
    agreed.id = "0.3";
    agreed.cache = "/scratch/nbr cache";
    agreed.options[0] = "auto";
    agreed.options[2] = "10";
    agreed.options[5] = "24";
    agreed.dir = "/patterns/00ab";
    return agreed;
}

TEST(Agreement, RoundTripsExactly) {
    const Agreed agreed = sample();
    const auto decoded = decode_agreed(encode_agreed(agreed));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, agreed);
}

TEST(Agreement, EmptyDecisionRoundTrips) {
    const auto decoded = decode_agreed(encode_agreed(Agreed{}));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, Agreed{});
}

TEST(Agreement, NewlinesAndColonsInValuesStayInTheirField) {
    // A newline in a value shifted every later field when the text was read line by line.
    Agreed agreed = sample();
    agreed.cache = "a\nb:c";
    agreed.options[1] = "12:34\n";
    agreed.dir = "\n";
    const auto decoded = decode_agreed(encode_agreed(agreed));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->cache, "a\nb:c");
    EXPECT_EQ(decoded->options[1], "12:34\n");
    EXPECT_EQ(decoded->options[2], "10");
    EXPECT_EQ(decoded->dir, "\n");
}

TEST(Agreement, TextItDidNotWriteIsRefused) {
    const std::string text = encode_agreed(sample());
    EXPECT_FALSE(decode_agreed("").has_value());
    EXPECT_FALSE(decode_agreed(text.substr(0, text.size() - 1)).has_value());  // cut short
    EXPECT_FALSE(decode_agreed(text + "x").has_value());                       // bytes left over
    EXPECT_FALSE(decode_agreed("99999999999999999999999:x").has_value());      // length overflows
    EXPECT_FALSE(decode_agreed("-1:" + text).has_value());                     // not a length
    EXPECT_FALSE(decode_agreed(":" + text).has_value());                       // no length
}

}  // namespace
