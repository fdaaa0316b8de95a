// split_list_test.cpp: et::split_list — trimming, empty items dropped or kept, blank input, other separators.
#include <doctest/doctest.h>

#include "ethost/text/split.h"

using et::EmptyItems;
using et::split_list;
using V = std::vector<std::string>;

TEST_SUITE("unit.split_list") {
  TEST_CASE("items are trimmed of spaces and tabs; inner spaces stay") {
    CHECK(split_list("a, b ,\tc d\t") == V{"a", "b", "c d"});
    CHECK(split_list("single") == V{"single"});
  }

  TEST_CASE("empty items: dropped by default, kept in place on request") {
    CHECK(split_list("a,,b, ,") == V{"a", "b"});
    CHECK(split_list("a,,b, ,", ',', EmptyItems::keep) == V{"a", "", "b", "", ""});
    CHECK(split_list(",", ',', EmptyItems::keep) == V{"", ""});
  }

  TEST_CASE("an empty or blank string is the empty list with either policy") {
    for (auto policy : {EmptyItems::drop, EmptyItems::keep}) {
      CHECK(split_list("", ',', policy).empty());
      CHECK(split_list(" \t ", ',', policy).empty());
    }
  }

  TEST_CASE("other separators; UTF-8 passes through") {
    CHECK(split_list("差,好/坏 , 中", '/') == V{"差,好", "坏 , 中"});
    CHECK(split_list("x:y", ':') == V{"x", "y"});
    CHECK(split_list("a;b", ',') == V{"a;b"});
  }
}
