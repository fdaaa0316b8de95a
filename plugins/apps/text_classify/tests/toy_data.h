// toy_data.h: the toy text-classification task the app's tests train on — the label says which of two marker
// words (很好 / 很差) a text holds; 256 training and 64 dev rows as text<TAB>label TSV.
#pragma once

#include <filesystem>
#include <string>

#include "process.h"

namespace et::test {

inline void write_marker_toy(const std::filesystem::path& dir) {
  std::string train, dev;
  const char* fill[] = {"今天", "东西", "我们", "快递", "价格", "颜色", "包装", "时间"};
  for (int i = 0; i < 320; ++i) {
    std::string text =
        std::string(fill[i % 8]) + fill[(i / 8) % 8] + (i % 2 ? "很好" : "很差") + fill[(i / 3) % 8];
    (i < 256 ? train : dev) += text + "\t" + (i % 2 ? "Positive" : "Negative") + "\n";
  }
  write_file(dir / "train.tsv", train);
  write_file(dir / "dev.tsv", dev);
}

}  // namespace et::test
