// fashionbert_parts_test.cpp: the FashionBERT app's pieces, white-box — adaptive loss weights against
// hand-computed values, ranks with ties, Rank@K and AUC, the negative levels, image decoding (corrupt,
// truncated, grey, empty files refused with a reason), the patch grid order, and pair tables with bad rows.
#include "../images.cpp"
#include "../pairs.cpp"
#include "../retrieval.cpp"

#include <doctest/doctest.h>
#include <stb/stb_image_write.h>

#include <fstream>

#include "process.h"
#include "test_paths.h"

namespace fb = et::apps::fashionbert;
using et::test::write_file;

namespace {
const std::string kFbData = ETHOST_SOURCE_DIR "/data/fashionbert";
}

TEST_SUITE("plugin.fashionbert_app") {
  TEST_CASE("adaptive loss weights: EasyTransfer's formula, values computed by hand") {
    // nG = softmax(G)^2, w_i = prod_{j != i}(3 - nG_j) / sum; reference values from a few lines of Python.
    auto w = fb::adaptive_weights({1.0, 2.0, 3.0});
    CHECK(w[0] == doctest::Approx(0.313726882).epsilon(1e-8));
    CHECK(w[1] == doctest::Approx(0.319252809).epsilon(1e-8));
    CHECK(w[2] == doctest::Approx(0.367020309).epsilon(1e-8));
    auto eq = fb::adaptive_weights({0.5, 0.5, 0.5});
    for (double v : eq) CHECK(v == doctest::Approx(1.0 / 3));
    auto big = fb::adaptive_weights({10.3, 0.69, 0.02});
    CHECK(big[0] == doctest::Approx(0.428546609).epsilon(1e-8));
    CHECK(big[1] == doctest::Approx(0.285726696).epsilon(1e-8));
    CHECK(big[0] + big[1] + big[2] == doctest::Approx(1.0));
  }

  TEST_CASE("ranks: strict order, ties at random (a constant scorer ranks at chance), Rank@K, AUC") {
    CHECK(fb::positive_rank({0.9f, 0.1f, 0.2f}, 1) == 1);
    CHECK(fb::positive_rank({0.5f, 0.9f, 0.7f, 0.1f}, 1) == 3);
    // 101 equal scores: the mean rank over many seeds is near 51, not 1.
    std::vector<float> flat(101, 0.5f);
    double sum = 0;
    for (uint64_t s = 0; s < 2000; ++s) sum += double(fb::positive_rank(flat, s));
    CHECK(sum / 2000 == doctest::Approx(51.0).epsilon(0.05));
    auto m = fb::rank_at({1, 3, 12, 100}, {1, 5, 10, 100}, "i2t_");
    CHECK(m["i2t_rank@1"] == doctest::Approx(0.25));
    CHECK(m["i2t_rank@5"] == doctest::Approx(0.5));
    CHECK(m["i2t_rank@10"] == doctest::Approx(0.5));
    CHECK(m["i2t_rank@100"] == doctest::Approx(1.0));
    // AUC by hand: positives {0.9, 0.4}, negatives {0.5, 0.4, 0.1}: wins 3 + (1 + 0.5) = 4.5 of 6.
    CHECK(fb::roc_auc({0.9f, 0.4f}, {0.5f, 0.4f, 0.1f}) == doctest::Approx(0.75));
  }

  TEST_CASE("negatives: subCategory when it has enough items, else masterCategory, else any; seeded") {
    std::vector<std::string> sub, master;
    for (int i = 0; i < 6; ++i) sub.push_back("Shoes"), master.push_back("Footwear");
    for (int i = 0; i < 3; ++i) sub.push_back("Sandal"), master.push_back("Footwear");
    sub.push_back("Watches"), master.push_back("Accessories");
    auto d = fb::draw_negatives(sub, master, {0, 6, 9}, 4, "category", 7);
    CHECK(d.from_sub == 1);     // a shoe: 5 other shoes
    CHECK(d.from_master == 1);  // a sandal: 2 other sandals, 8 other footwear
    CHECK(d.from_random == 1);  // the watch: alone in its categories
    for (int64_t n : d.negatives[0]) CHECK(sub[size_t(n)] == "Shoes");
    for (int64_t n : d.negatives[1]) CHECK(master[size_t(n)] == "Footwear");
    for (size_t q = 0; q < 3; ++q) {
      CHECK(d.negatives[q].size() == 4);
      std::set<int64_t> distinct(d.negatives[q].begin(), d.negatives[q].end());
      CHECK(distinct.size() == 4);
      CHECK(distinct.count(std::vector<int64_t>{0, 6, 9}[q]) == 0);  // never the query itself
    }
    auto again = fb::draw_negatives(sub, master, {0, 6, 9}, 4, "category", 7);
    CHECK(again.negatives == d.negatives);
  }

  TEST_CASE("images: a product photo decodes to RGB; corrupt, truncated, grey and empty files have reasons") {
    std::string jpeg = et::test::read_file(kFbData + "/images/10003.jpg");
    std::string why;
    auto img = fb::decode_image(jpeg, why);
    REQUIRE(img);
    CHECK(img->sizes() == at::IntArrayRef({3, 224, 224}));
    CHECK(fb::resize_center_crop(*img, 224).equal(*img));
    CHECK(fb::resize_center_crop(*img, 56).sizes() == at::IntArrayRef({3, 56, 56}));

    CHECK_FALSE(fb::decode_image(jpeg.substr(0, jpeg.size() / 2), why));
    CHECK(why.find("truncated") != std::string::npos);
    CHECK_FALSE(fb::decode_image("this is not an image at all", why));
    CHECK(why.find("not a readable") != std::string::npos);
    CHECK_FALSE(fb::decode_image("", why));
    CHECK(why == "empty file");
    et::test::TempDir dir("fbimg");
    unsigned char grey[16 * 16];
    for (int i = 0; i < 256; ++i) grey[i] = static_cast<unsigned char>(i);
    REQUIRE(stbi_write_png((dir / "grey.png").c_str(), 16, 16, 1, grey, 16));
    CHECK_FALSE(fb::decode_image(et::test::read_file(dir / "grey.png"), why));
    CHECK(why.find("1 channel") != std::string::npos);
  }

  TEST_CASE("patches: row-major grid, each patch channel-major; ImageNet normalisation") {
    // Pixel value = 10 * row-block + column-block: patch k of a 2x2 grid holds 10 * (k / 2) + k % 2.
    auto img = torch::zeros({1, 3, 4, 4}, torch::kFloat);
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) img.index_put_({0, torch::indexing::Slice(), y, x}, 10 * (y / 2) + x / 2);
    auto p = fb::cut_patches(img, 2);
    REQUIRE(p.sizes() == at::IntArrayRef({1, 4, 3, 2, 2}));
    for (int k = 0; k < 4; ++k) CHECK(p[0][k].eq(10 * (k / 2) + k % 2).all().item<bool>());
    auto white = torch::full({1, 3, 1, 1}, 255, torch::kUInt8);
    auto n = fb::normalize_imagenet(white).flatten();
    CHECK(n[0].item<double>() == doctest::Approx((1 - 0.485) / 0.229).epsilon(1e-5));
    CHECK(n[2].item<double>() == doctest::Approx((1 - 0.406) / 0.225).epsilon(1e-5));
  }

  TEST_CASE("pair tables: header-addressed columns, paths relative to the table, bad rows counted") {
    auto t = fb::read_pair_table(kFbData + "/pairs.tsv", false);
    CHECK(t.size() == 48);
    CHECK(t.bad_rows == 0);
    CHECK(t.image[0] == kFbData + "/images/" + t.id[0] + ".jpg");
    CHECK(!t.sub[0].empty());
    et::test::TempDir dir("fbtab");
    write_file(dir / "p.tsv",
               "image\tid\ttitle\n"
               "a.jpg\t1\tRed Shirt\r\n"
               "b.jpg\t2\n"
               "\t3\tNo Image\n"
               "c.jpg\t4\tBlue Shoes\n");
    auto b = fb::read_pair_table(dir / "p.tsv", false);
    CHECK(b.size() == 2);
    CHECK(b.bad_rows == 2);
    CHECK(b.title[0] == "Red Shirt");
    CHECK(b.sub[0].empty());
    CHECK(b.bad_examples[0].find("line 3") != std::string::npos);
    CHECK_THROWS_AS(fb::read_pair_table(dir / "p.tsv", true), et::DataError);
    write_file(dir / "q.tsv", "id\tpicture\ttitle\n1\ta.jpg\tx\n");
    CHECK_THROWS_WITH_AS(fb::read_pair_table(dir / "q.tsv", false), doctest::Contains("no 'image' column"),
                         et::DataError);
  }
}
