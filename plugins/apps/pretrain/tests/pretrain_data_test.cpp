// pretrain_data_test.cpp: the pretraining app's data path, white-box (its sources are compiled in) — corpus
// formats, CSV quoting, bad rows, exclusion, seeking; packing (whole sentences, filled sequences, NSP/SOP
// pairs); the packer's state resuming exactly; masking on real packed batches (whole words, 15%, 80/10/10,
// specials and padding untouched).
#include "../corpus.cpp"
#include "../packer.cpp"
#include "../stream_source.cpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "process.h"
#include "test_paths.h"

namespace pt = et::apps::pretrain;
using et::test::write_file;

namespace {

const std::string kVocab = ETHOST_SOURCE_DIR "/data/vocab/bert-base-chinese-vocab.txt";

std::vector<std::vector<std::string>> all_documents(pt::Corpus& c) {
  std::vector<std::vector<std::string>> docs;
  std::vector<std::string> d;
  while (c.next_document(d)) docs.push_back(d);
  return docs;
}

pt::CorpusOptions options(std::vector<std::string> files) {
  pt::CorpusOptions o;
  o.files = std::move(files);
  o.text_fields = {"text", "text_a", "sentence", "sentence1", "sentence2", "content", "review"};
  return o;
}

const et::text::Tokenizer& tokenizer() {
  static et::text::Tokenizer t = et::text::Tokenizer::from_vocab_file(kVocab);
  return t;
}

const et::text::Segmenter& segmenter() {
  static et::text::Segmenter s = et::text::Segmenter::from_file(et::text::Segmenter::default_dict_path());
  return s;
}

}  // namespace

TEST_SUITE("plugin.pretrain") {
  TEST_CASE("text format: a sentence a line, blank lines between documents; seek resumes at a document") {
    et::test::TempDir dir("pt_text");
    write_file(dir / "a.txt", "第一句。\n第二句。\n\n\n第三句\r\n\n第四句\n");
    write_file(dir / "b.txt", "\xff\xfe bad\n第五句\n");
    pt::Corpus c(options({dir / "a.txt", dir / "b.txt"}));
    std::vector<std::string> d;
    REQUIRE(c.next_document(d));
    CHECK(d == std::vector<std::string>{"第一句。", "第二句。"});
    pt::Position p = c.tell();
    REQUIRE(c.next_document(d));
    CHECK(d == std::vector<std::string>{"第三句"});
    auto rest = all_documents(c);
    REQUIRE(rest.size() == 2);
    CHECK(rest[0] == std::vector<std::string>{"第四句"});
    CHECK(rest[1] == std::vector<std::string>{"第五句"});  // the invalid line is counted and skipped
    CHECK(c.bad_rows().count() == 1);
    CHECK(et::test::contains(c.bad_rows().summary(), "b.txt:1"));
    c.seek(p);
    REQUIRE(c.next_document(d));
    CHECK(d == std::vector<std::string>{"第三句"});
  }

  TEST_CASE("JSONL fields, TSV columns, CSV with quotes, doubled quotes and line breaks; bad rows counted") {
    et::test::TempDir dir("pt_rows");
    write_file(dir / "a.jsonl",
               "{\"id\":1,\"sentence1\":\"你好吗？我很好\",\"sentence2\":\"谢谢\"}\n\n{oops\n{\"content\":"
               "\"内容\"}\n"
               "{\"id\":3}\n");
    write_file(dir / "b.tsv", "label\ttext_a\n1\t好书！推荐\n0\n1\t不错\n");
    write_file(dir / "c.csv", "label,review\n1,\"好吃,量大\"\n0,\"他说\"\"不行\"\"\n下次不来了\"\n1,一般\n");
    pt::Corpus c(options({dir / "a.jsonl", dir / "b.tsv", dir / "c.csv"}));
    auto docs = all_documents(c);
    REQUIRE(docs.size() == 7);
    CHECK(docs[0] == std::vector<std::string>{"你好吗？", "我很好", "谢谢"});
    CHECK(docs[1] == std::vector<std::string>{"内容"});
    CHECK(docs[2] == std::vector<std::string>{"好书！", "推荐"});
    CHECK(docs[3] == std::vector<std::string>{"不错"});
    CHECK(docs[4] == std::vector<std::string>{"好吃,量大"});
    CHECK(docs[5] == std::vector<std::string>{"他说\"不行\"", "下次不来了"});
    CHECK(docs[6] == std::vector<std::string>{"一般"});
    CHECK(c.bad_rows().count() == 3);  // {oops, a row without a text field, a short TSV row
    auto ex = c.bad_rows().examples();
    REQUIRE(ex.size() == 3);
    CHECK(et::test::contains(ex[0], "a.jsonl:3: not a JSON object"));
    CHECK(et::test::contains(ex[1], "a.jsonl:5: no text field"));
    CHECK(et::test::contains(ex[2], "b.tsv:3: 1 cells, the header has 2"));
  }

  TEST_CASE("configuration mistakes are clear errors naming the file") {
    et::test::TempDir dir("pt_err");
    write_file(dir / "a.tsv", "label\tbody\n1\tx\n");
    write_file(dir / "b.jsonl", "{\"body\":\"x\"}\n");
    CHECK_THROWS_WITH_AS(
        pt::Corpus(options({dir / "a.tsv"})),
        doctest::Contains("none of data.text_fields is a column of the header (label, body)"),
        et::ConfigError);
    pt::Corpus c(options({dir / "b.jsonl"}));
    std::vector<std::string> d;
    CHECK_THROWS_WITH_AS(c.next_document(d), doctest::Contains("its keys: body"), et::ConfigError);
    CHECK_THROWS_AS(pt::Corpus(options({dir / "missing.txt"})), et::DataError);
    CHECK_THROWS_AS(pt::expand_tables({dir / "*.csv"}), et::DataError);
    CHECK(pt::expand_tables({dir.path()}).size() == 2);
    CHECK(pt::expand_tables({dir / "*.tsv"}) == std::vector<std::string>{dir / "a.tsv"});
  }

  TEST_CASE("rows repeating an excluded table are dropped and counted: EPRSTMT unlabeled vs dev/test") {
    auto ex_opts = options({ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/dev_few_all.json",
                            ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/test_public.json"});
    ex_opts.split_sentences = false;
    pt::Corpus ex(ex_opts);
    auto set = std::make_shared<std::unordered_set<std::string>>();
    for (auto& d : all_documents(ex))
      for (auto& t : d) set->insert(t);
    auto o = options({ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/unlabeled.json"});
    o.exclude = set;
    pt::Corpus c(o);
    auto docs = all_documents(c);
    MESSAGE("eprstmt unlabeled: " << docs.size() << " rows kept, " << c.excluded()
                                  << " dropped (repeat dev_few_all/test_public)");
    CHECK(c.excluded() >= 45);  // 45 of the 610 test_public sentences, plus dev_few_all repeats
    CHECK(c.excluded() < 200);
  }

  TEST_CASE("packing: whole sentences up to the length (long ones split); fill mode fills every sequence") {
    et::test::TempDir dir("pt_pack");
    std::string line;
    for (int i = 0; i < 30; ++i) line += "长";
    write_file(dir / "a.txt", "一二三四五\n" + line + "\n六七八\n\n九十\n");
    pt::Corpus c(options({dir / "a.txt"}));
    pt::PackOptions po;
    po.max_length = 12;  // 10 tokens of text
    pt::Packer p(c, tokenizer(), nullptr, po);
    std::vector<size_t> lengths;
    pt::Instance in;
    while (p.next(in)) {
      CHECK(in.input_ids.front() == tokenizer().vocab().cls_id());
      CHECK(in.input_ids.back() == tokenizer().vocab().sep_id());
      CHECK(in.word_ids.front() == -1);
      CHECK(in.word_ids.back() == -1);
      lengths.push_back(in.input_ids.size() - 2);
    }
    // 5 | 10 10 10 (the 30-token line, split) | 3 + 2 (across the document boundary)
    CHECK(lengths == std::vector<size_t>{5, 10, 10, 10, 5});
    CHECK(p.tokens_read() == 40);
    po.fill = true;
    pt::Packer f(c, tokenizer(), nullptr, po);
    lengths.clear();
    while (f.next(in)) lengths.push_back(in.input_ids.size() - 2);
    CHECK(lengths == std::vector<size_t>{10, 10, 10, 10});
    po.fill = false;
    po.cross_documents = false;
    pt::Packer d(c, tokenizer(), nullptr, po);
    lengths.clear();
    while (d.next(in)) lengths.push_back(in.input_ids.size() - 2);
    CHECK(lengths == std::vector<size_t>{5, 10, 10, 10, 3, 2});
  }

  TEST_CASE("NSP and SOP pairs: [CLS] A [SEP] B [SEP], labels near 50/50, random B from other documents") {
    for (auto task : {pt::PairTask::nsp, pt::PairTask::sop}) {
      CAPTURE(static_cast<int>(task));
      pt::Corpus c(options({ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/unlabeled.json"}));
      pt::PackOptions po;
      po.max_length = 64;
      po.pair_task = task;
      pt::Packer p(c, tokenizer(), &segmenter(), po);
      pt::Instance in;
      int64_t n = 0, ones = 0;
      const auto sep = tokenizer().vocab().sep_id();
      while (n < 2000 && p.next(in)) {
        REQUIRE(in.input_ids.size() <= 64);
        REQUIRE(in.input_ids.back() == sep);
        int seps = 0;
        size_t first_sep = 0;
        for (size_t i = 0; i < in.input_ids.size(); ++i)
          if (in.input_ids[i] == sep && seps++ == 0) first_sep = i;
        CHECK(seps == 2);
        for (size_t i = 0; i < in.input_ids.size(); ++i)
          CHECK(in.token_type_ids[i] == (i > first_sep ? 1 : 0));
        CHECK((in.pair_label == 0 || in.pair_label == 1));
        ones += in.pair_label;
        ++n;
      }
      REQUIRE(n == 2000);
      MESSAGE("pair task " << static_cast<int>(task) << ": " << ones << " of " << n << " labelled 1");
      CHECK(ones > 700);
      CHECK(ones < 1300);
    }
  }

  TEST_CASE("the packer's state resumes exactly, mid-document and across files") {
    for (auto task : {pt::PairTask::none, pt::PairTask::nsp})
      for (bool interleave : {false, true}) {
        CAPTURE(static_cast<int>(task));
        CAPTURE(interleave);
        auto files = std::vector<std::string>{ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/train_few_all.json",
                                              ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/dev_few_all.json"};
        auto co = options(files);
        co.interleave = interleave;
        pt::Corpus a(co), b(co);
        pt::PackOptions po;
        po.max_length = 40;
        po.pair_task = task;
        pt::Packer pa(a, tokenizer(), &segmenter(), po), pb(b, tokenizer(), &segmenter(), po);
        pa.restart(3);
        pt::Instance in, other;
        for (int i = 0; i < 37; ++i) REQUIRE(pa.next(in));
        std::string state = pa.state();
        pb.restore(state);
        int64_t compared = 0;
        while (pa.next(in)) {
          REQUIRE(pb.next(other));
          CHECK(in.input_ids == other.input_ids);
          CHECK(in.word_ids == other.word_ids);
          CHECK(in.pair_label == other.pair_label);
          ++compared;
        }
        CHECK_FALSE(pb.next(other));
        CHECK(pa.index() == pb.index());
        CHECK(pa.tokens_read() == pb.tokens_read());
        MESSAGE("compared " << compared << " sequences after the restored state");
        CHECK(compared > 20);
      }
  }

  TEST_CASE("interleaved files: every document once, the files mixed from the start, a new order each pass") {
    auto files = std::vector<std::string>{ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/unlabeled.json",
                                          ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/train_few_all.json",
                                          ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/dev_few_all.json"};
    auto read_all = [&](bool interleave, int64_t pass, std::vector<std::string>* first_docs) {
      auto co = options(files);
      co.interleave = interleave;
      pt::Corpus c(co);
      pt::Position start;
      start.pass = pass;
      c.seek(start);
      std::multiset<std::string> docs;
      std::vector<std::string> s;
      while (c.next_document(s)) {
        std::string d;
        for (auto& x : s) d += x + "\n";
        if (first_docs && first_docs->size() < 2000) first_docs->push_back(d);
        docs.insert(d);
      }
      return docs;
    };
    std::vector<std::string> seq_first, mix_first, mix_first2;
    auto seq = read_all(false, 0, &seq_first);
    auto mix = read_all(true, 0, &mix_first);
    auto mix2 = read_all(true, 1, &mix_first2);
    CHECK(seq.size() > 19000);
    CHECK(mix == seq);  // the same documents, each once
    CHECK(mix2 == seq);
    CHECK(mix_first != mix_first2);  // another order in the next pass
    // The small files (160 + 160 rows next to 19,565) appear in the first 2,000 documents in proportion
    // (about 2000 x 1.6% = 32), not only at the end as in sequential order.
    std::multiset<std::string> small;
    {
      auto co = options({files[1], files[2]});
      pt::Corpus c(co);
      std::vector<std::string> s;
      small.clear();
      while (c.next_document(s)) {
        std::string d;
        for (auto& x : s) d += x + "\n";
        small.insert(d);
      }
    }
    auto count_small = [&](const std::vector<std::string>& v) {
      int n = 0;
      for (auto& d : v) n += small.count(d) > 0;
      return n;
    };
    CHECK(count_small(seq_first) <= 1);  // (one review of the small files is also in unlabeled.json)
    CHECK(count_small(mix_first) > 10);
    CHECK(count_small(mix_first) < 90);
  }

  TEST_CASE("masking real packed batches: whole words, 15%, 80/10/10, specials and padding untouched") {
    pt::Corpus c(options({ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/unlabeled.json"}));
    pt::PackOptions po;
    po.max_length = 128;
    pt::Packer p(c, tokenizer(), &segmenter(), po);
    pt::MaskSpec spec;
    spec.vocab = et::data::mask_vocab(tokenizer().vocab());
    spec.mlm.max_predictions = 0;
    const auto& v = tokenizer().vocab();
    const auto schema = pt::pretrain_schema(v.pad_id(), false);
    int64_t maskable = 0, targets = 0, masked = 0, randomized = 0, kept = 0, padding = 0, multi = 0;
    pt::Instance in;
    for (int batch = 0; batch < 40; ++batch) {
      std::vector<pt::Instance> ins;
      std::vector<et::data::Example> exs;
      while (ins.size() < 32 && p.next(in)) {
        exs.push_back(pt::masked_example(in, spec, 1, p.index() - 1));
        ins.push_back(in);
      }
      REQUIRE(ins.size() == 32);
      std::vector<const et::data::Example*> ptrs;
      for (auto& e : exs) ptrs.push_back(&e);
      auto b = et::data::collate_examples(schema, ptrs);
      auto ids_t = b.tensors.at("input_ids").contiguous(), labels_t = b.tensors.at("mlm_labels").contiguous();
      auto mask_t = b.tensors.at("attention_mask").contiguous();
      auto ids = ids_t.accessor<int64_t, 2>(), labels = labels_t.accessor<int64_t, 2>();
      auto mask = mask_t.accessor<int64_t, 2>();
      const int64_t T = ids_t.size(1);
      for (int64_t r = 0; r < 32; ++r) {
        const auto& x = ins[size_t(r)];
        std::map<int32_t, std::pair<int, int>> word_targets;  // word -> (tokens, targets)
        for (int64_t t = 0; t < T; ++t) {
          const int64_t id = ids[r][t], y = labels[r][t];
          if (t >= static_cast<int64_t>(x.input_ids.size())) {  // padding
            CHECK(mask[r][t] == 0);
            CHECK(y == -100);
            CHECK(id == v.pad_id());
            ++padding;
            continue;
          }
          const int32_t w = x.word_ids[size_t(t)];
          if (w < 0) {  // [CLS] / [SEP]
            CHECK(y == -100);
            CHECK(id == x.input_ids[size_t(t)]);
            continue;
          }
          ++maskable;
          auto& wt = word_targets[w];
          ++wt.first;
          if (y == -100) {
            CHECK(id == x.input_ids[size_t(t)]);
            continue;
          }
          ++wt.second;
          ++targets;
          CHECK(y == x.input_ids[size_t(t)]);
          if (id == v.mask_id())
            ++masked;
          else if (id == y)
            ++kept;
          else
            ++randomized;
        }
        for (auto& [w, tt] : word_targets) {
          CHECK((tt.second == 0 || tt.second == tt.first));  // a chosen word is chosen whole
          if (tt.first > 1 && tt.second > 0) ++multi;
        }
      }
    }
    const double rate = double(targets) / double(maskable);
    MESSAGE("1280 packed sequences: " << targets << " targets of " << maskable << " tokens (" << rate
                                      << "), mask/random/keep " << double(masked) / targets << "/"
                                      << double(randomized) / targets << "/" << double(kept) / targets
                                      << ", multi-token words chosen " << multi << ", padding " << padding);
    CHECK(rate == doctest::Approx(0.15).epsilon(0.07).scale(0));
    CHECK(double(masked) / targets == doctest::Approx(0.8).epsilon(0.03).scale(0));
    CHECK(double(randomized) / targets == doctest::Approx(0.1).epsilon(0.15).scale(0));
    CHECK(double(kept) / targets == doctest::Approx(0.1).epsilon(0.15).scale(0));
    CHECK(multi > 1000);
  }

  TEST_CASE("dynamic masking changes per epoch, static masking does not; both are functions of the index") {
    pt::Instance in;
    pt::Corpus c(options({ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/train_few_all.json"}));
    pt::Packer p(c, tokenizer(), &segmenter(), {});
    REQUIRE(p.next(in));
    pt::MaskSpec spec;
    spec.vocab = et::data::mask_vocab(tokenizer().vocab());
    auto labels = [&](int64_t epoch) {
      return pt::masked_example(in, spec, epoch, 0).at("mlm_labels").as<int64_t>();
    };
    CHECK(labels(0) == labels(0));
    CHECK(labels(0) != labels(1));
    spec.dynamic = false;
    CHECK(labels(0) == labels(5));
  }
  TEST_CASE("the stream's end-of-pass counts are one pass's, not the sum of every pass so far") {
    const std::string file = ETHOST_SOURCE_DIR "/data/fewclue/eprstmt/train_few_all.json";
    auto ex = options({file});
    ex.split_sentences = false;
    auto excluded = std::make_shared<std::unordered_set<std::string>>();
    {
      pt::Corpus c(ex);
      std::vector<std::string> d;
      for (int i = 0; i < 7 && c.next_document(d); ++i) excluded->insert(d[0]);
    }
    auto co = options({file});
    co.exclude = excluded;
    auto corpus = std::make_unique<pt::Corpus>(co);
    auto packer = std::make_unique<pt::Packer>(*corpus, tokenizer(), &segmenter(), pt::PackOptions{});
    pt::MaskSpec spec;
    spec.vocab = et::data::mask_vocab(tokenizer().vocab());
    pt::StreamSource s(std::move(corpus), std::move(packer), spec, false, tokenizer().vocab().pad_id());
    et::data::SourceOptions so;
    so.micro_batch_size = 16;
    s.configure(so);
    CHECK(s.excluded_per_pass() == -1);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      s.start_epoch(epoch, 0);
      et::data::Batch b;
      while (s.next(b)) {
      }
      CHECK(s.excluded_per_pass() == 8);  // the 7 texts, one of them twice in the file
    }
    CHECK(s.corpus().excluded() == 24);  // the corpus's own counter runs over every pass
  }
}
