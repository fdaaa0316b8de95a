// tokenizer_save_test.cpp: Tokenizer::save(dir) round-trips through Tokenizer::from_model_dir — the
// vocabulary (U+2028 included), every option it keeps, and the tokens; an unwritable directory is a data
// error.
#include <doctest/doctest.h>

#include "ethost/error.h"
#include "ethost/text/tokenizer.h"
#include "process.h"
#include "test_paths.h"

using et::text::Tokenizer;
using et::text::TokenizerOptions;

TEST_SUITE("unit.tokenizer") {
  TEST_CASE("save(dir) then from_model_dir(dir) gives the same vocabulary, options and tokens") {
    const std::string vocab = ETHOST_FIXTURES_DIR "/tokenizer/bert-base-chinese-vocab.txt";
    for (bool lower : {true, false}) {
      CAPTURE(lower);
      TokenizerOptions o;
      o.do_lower_case = lower;
      o.strip_accents = !lower;
      o.tokenize_chinese_chars = lower;
      o.never_split = {"[unused1]", "Hello"};
      o.max_length = 32;
      Tokenizer t = Tokenizer::from_vocab_file(vocab, o);
      et::test::TempDir dir("tok_save");
      const std::string out = dir / "nested/tokenizer";  // created by save
      t.save(out);
      Tokenizer u = Tokenizer::from_model_dir(out);

      REQUIRE(u.vocab().size() == t.vocab().size());
      for (size_t i = 0; i < t.vocab().size(); ++i)
        CHECK(u.vocab().token(int64_t(i)) == t.vocab().token(int64_t(i)));
      CHECK(u.vocab().contains("\u2028"));
      CHECK(u.options().do_lower_case == lower);
      CHECK(u.options().strip_accents == std::optional<bool>(!lower));
      CHECK(u.options().tokenize_chinese_chars == lower);
      CHECK(u.options().never_split == o.never_split);
      CHECK(u.options().model_max_length == 32);  // max_length is saved as HF's model_max_length

      for (std::string text :
           {"我爱北京天安门 Hello Café [unused1]", "RÉSUMÉ\u2028line two", "2022年 emoji 😀"}) {
        CAPTURE(text);
        auto a = t.tokenize(text), b = u.tokenize(text);
        REQUIRE(a.size() == b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          CHECK(a[i].text == b[i].text);
          CHECK(a[i].id == b[i].id);
        }
      }

      // Saving the loaded tokenizer writes the same files again.
      u.save(dir / "again");
      CHECK(et::test::read_file(dir / "again/vocab.txt") == et::test::read_file(out + "/vocab.txt"));
      CHECK(et::test::read_file(dir / "again/tokenizer_config.json") ==
            et::test::read_file(out + "/tokenizer_config.json"));
    }
  }

  TEST_CASE("save into a path that cannot be a directory is a data error naming it") {
    et::test::TempDir dir("tok_save_err");
    et::test::write_file(dir / "file", "x");
    Tokenizer t = Tokenizer::from_vocab_file(ETHOST_FIXTURES_DIR "/tokenizer/bert-base-uncased-vocab.txt");
    CHECK_THROWS_WITH_AS(t.save(dir / "file/sub"), doctest::Contains("file/sub"), et::DataError);
  }
}
