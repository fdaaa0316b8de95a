// tensorboard_test.cpp: CRC-32C, Event encoding, TFRecord files (re-read by a C++ and a Python reader),
// metrics.jsonl.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "ethost/train/metrics_log.h"
#include "ethost/train/tensorboard.h"
#include "process.h"
#include "test_paths.h"
#include "train/crc32c.h"

using et::test::TempDir;
namespace tb = et::train;
namespace tbd = et::train::detail;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// A bitwise CRC-32C (no table), to cross-check the table-driven one.
uint32_t slow_crc32c(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

// ------------------------------------------------------------ a small decoder that walks the bytes itself
struct Cursor {
  const std::string& s;
  std::size_t pos = 0;
  bool done() const { return pos >= s.size(); }
  uint64_t le(int n) {
    REQUIRE(pos + n <= s.size());
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[pos + i])) << (8 * i);
    pos += n;
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      REQUIRE(pos < s.size());
      auto b = static_cast<unsigned char>(s[pos++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::string take(uint64_t n) {
    REQUIRE(pos + n <= s.size());
    std::string out = s.substr(pos, n);
    pos += n;
    return out;
  }
};

struct Decoded {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version, tag;
  float value = 0;
  bool has_value = false;
};

// Generic walk over (field number, wire type) pairs; calls fn(number, wire, cursor) which must consume the
// value.
template <class Fn>
void walk(const std::string& msg, Fn fn) {
  Cursor c{msg};
  while (!c.done()) {
    uint64_t key = c.varint();
    fn(static_cast<int>(key >> 3), static_cast<int>(key & 7), c);
  }
}

Decoded decode_event(const std::string& event) {
  Decoded d;
  walk(event, [&](int field, int wire, Cursor& c) {
    if (field == 1 && wire == 1) {
      uint64_t bits = c.le(8);
      std::memcpy(&d.wall_time, &bits, 8);
    } else if (field == 2 && wire == 0) {
      d.step = static_cast<int64_t>(c.varint());
    } else if (field == 3 && wire == 2) {
      d.file_version = c.take(c.varint());
    } else if (field == 5 && wire == 2) {
      walk(c.take(c.varint()), [&](int f2, int w2, Cursor& c2) {
        REQUIRE((f2 == 1 && w2 == 2));
        walk(c2.take(c2.varint()), [&](int f3, int w3, Cursor& c3) {
          if (f3 == 1 && w3 == 2) {
            d.tag = c3.take(c3.varint());
          } else {
            REQUIRE((f3 == 2 && w3 == 5));
            auto bits = static_cast<uint32_t>(c3.le(4));
            std::memcpy(&d.value, &bits, 4);
            d.has_value = true;
          }
        });
      });
    } else {
      FAIL("unexpected field " << field << " wire type " << wire);
    }
  });
  return d;
}

uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

// Splits a TFRecord file into records, checking both masked CRCs with the bitwise CRC above.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> out;
  Cursor c{file};
  while (!c.done()) {
    std::string len_bytes = c.take(8);
    uint64_t len = Cursor{len_bytes}.le(8);
    CHECK(c.le(4) == masked(slow_crc32c(len_bytes)));
    out.push_back(c.take(len));
    CHECK(c.le(4) == masked(slow_crc32c(out.back())));
  }
  return out;
}

std::string only_file_in(const std::string& dir) {
  std::vector<std::string> files;
  for (auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  REQUIRE(files.size() == 1);
  return files[0];
}

}  // namespace

TEST_SUITE("unit.tensorboard") {
  TEST_CASE("CRC-32C standard vectors (iSCSI, RFC 3720 B.4) and the table matches a bitwise CRC") {
    auto crc = [](const std::string& s) { return tbd::crc32c(s.data(), s.size()); };
    CHECK(crc("") == 0u);
    CHECK(crc("123456789") == 0xE3069283u);
    CHECK(crc(std::string(32, '\0')) == 0x8A9136AAu);
    CHECK(crc(std::string(32, '\xff')) == 0x62A8AB43u);
    std::string up, down;
    for (int i = 0; i < 32; ++i) {
      up.push_back(static_cast<char>(i));
      down.push_back(static_cast<char>(31 - i));
    }
    CHECK(crc(up) == 0x46DD794Eu);
    CHECK(crc(down) == 0x113FDB5Cu);
    // RFC 3720 B.4: an iSCSI SCSI Read (10) command PDU.
    std::string pdu =
        bytes({0x01, 0xc0, 0, 0,    0, 0, 0, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0, 0, 0x04, 0,
               0,    0,    0, 0x14, 0, 0, 0, 0x18, 0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0,    0});
    CHECK(crc(pdu) == 0xD9963A56u);
    // Chaining: crc(a + b) == extend(crc(a), b).
    CHECK(tbd::crc32c_extend(crc("1234"), "56789", 5) == 0xE3069283u);
    std::mt19937 rng(7);
    for (int len : {1, 3, 15, 64, 1000}) {
      std::string s;
      for (int i = 0; i < len; ++i) s.push_back(static_cast<char>(rng() & 0xFF));
      CHECK(crc(s) == slow_crc32c(s));
    }
  }

  TEST_CASE("masked CRC values") {
    CHECK(tbd::mask_crc32c(0) == 0xa282ead8u);
    // 0xE3069283: >> 15 = 0x0001C60D, << 17 = 0x25060000, rotated 0x2507C60D, + 0xa282ead8 = 0xC78AB0E5.
    CHECK(tbd::mask_crc32c(0xE3069283u) == 0xC78AB0E5u);
    CHECK(tbd::unmask_crc32c(0xC78AB0E5u) == 0xE3069283u);
    // Every TensorBoard event file starts with 18 00 00 00 00 00 00 00 a3 7f 4b 22: the 24-byte file_version
    // event's length and its masked CRC.
    std::string len24 = bytes({0x18, 0, 0, 0, 0, 0, 0, 0});
    CHECK(tbd::masked_crc32c(len24.data(), 8) == 0x224B7FA3u);
    std::string first = tb::tfevents::frame_record(tb::tfevents::encode_file_version_event(1.0));
    CHECK(first.substr(0, 12) == bytes({0x18, 0, 0, 0, 0, 0, 0, 0, 0xa3, 0x7f, 0x4b, 0x22}));
  }

  TEST_CASE("exact bytes of a scalar Event and of the file_version Event") {
    // wall_time 1.5 = 0x3FF8000000000000 (sign 0, exponent 1023, mantissa .1b); step 300 = 0b10'0101100 ->
    // varint 0xAC 0x02; 0.25f = 0x3E800000. Value = 0a 04 "loss" 15 00 00 80 3e (11 bytes);
    // Summary = 0a 0b <Value> (13 bytes); Event = 09 <8 bytes> 10 ac 02 2a 0d <Summary> (27 bytes).
    // clang-format off
    std::string expected = bytes({0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,  // wall_time
                                  0x10, 0xac, 0x02,                     // step
                                  0x2a, 0x0d,                           // summary, 13 bytes
                                  0x0a, 0x0b,                           //   value, 11 bytes
                                  0x0a, 0x04, 'l', 'o', 's', 's',       //     tag
                                  0x15, 0x00, 0x00, 0x80, 0x3e});       //     simple_value
    // clang-format on
    CHECK(tb::tfevents::encode_scalar_event("loss", 0.25f, 300, 1.5) == expected);
    // Event { wall_time 2.0 = 0x4000000000000000, file_version (field 3) "brain.Event:2" (13 bytes) }.
    CHECK(tb::tfevents::encode_file_version_event(2.0) ==
          bytes({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x1a, 0x0d}) + "brain.Event:2");
    // A negative step is a 10-byte two's-complement varint, as protobuf writes int64.
    auto d = decode_event(tb::tfevents::encode_scalar_event("x", 1, -3, 0));
    CHECK(d.step == -3);
    // Framing: length, masked CRC of the length bytes, data, masked CRC of the data.
    std::string rec = tb::tfevents::frame_record("a");
    CHECK(rec.size() == 17);
    CHECK(rec.substr(0, 8) == bytes({1, 0, 0, 0, 0, 0, 0, 0}));
    CHECK(rec.substr(12, 1) == "a");
    CHECK(Cursor{rec, 13}.le(4) == masked(slow_crc32c("a")));
  }

  TEST_CASE("a written file reads back: framing, both CRCs, file_version and two scalars") {
    TempDir dir("tensorboard");
    std::string log_dir = dir / "runs/a";  // created by the writer
    {
      tb::TensorBoardWriter w(log_dir);
      CHECK(w.path().find(log_dir + "/events.out.tfevents.") == 0);
      w.add_scalar("train/loss", 0.75, 10, 1000.5);
      w.add_scalar("eval/accuracy", -2.125, 20, 1001.25);
    }
    std::string path = only_file_in(log_dir);
    auto records = read_records(et::test::read_file(path));
    REQUIRE(records.size() == 3);
    auto v = decode_event(records[0]);
    CHECK(v.file_version == "brain.Event:2");
    CHECK(std::abs(v.wall_time - tb::wall_time_now()) < 600);
    auto a = decode_event(records[1]);
    CHECK(a.tag == "train/loss");
    CHECK(a.step == 10);
    CHECK(a.value == 0.75f);
    CHECK(a.wall_time == 1000.5);
    auto b = decode_event(records[2]);
    CHECK(b.tag == "eval/accuracy");
    CHECK(b.step == 20);
    CHECK(b.value == -2.125f);
    CHECK(b.wall_time == 1001.25);
  }

  TEST_CASE(
      "buffering: records wait for the limit, flush() or destruction; a second writer gets its own file") {
    TempDir dir("tensorboard");
    tb::TensorBoardOptions opts;
    opts.flush_every_records = 3;
    opts.flush_every_seconds = 3600;
    tb::TensorBoardWriter w(dir.path(), opts);
    auto count = [&] { return read_records(et::test::read_file(w.path())).size(); };
    CHECK(count() == 1);  // file_version is written at once
    w.add_scalar("a", 1, 1);
    w.add_scalar("a", 2, 2);
    CHECK(count() == 1);
    w.add_scalar("a", 3, 3);
    CHECK(count() == 4);
    w.add_scalar("a", 4, 4);
    w.flush();
    CHECK(count() == 5);
    tb::TensorBoardWriter w2(dir.path(), opts);
    CHECK(w2.path() != w.path());
  }

  TEST_CASE("I/O problems never throw") {
    TempDir dir("tensorboard");
    et::test::write_file(dir / "file", "x");
    tb::TensorBoardWriter w(dir / "file/sub");  // cannot create a folder under a file
    CHECK(w.path().empty());
    CHECK_NOTHROW(w.add_scalar("a", 1, 1));
    CHECK_NOTHROW(w.flush());
    tb::MetricsLog log(dir / "file/metrics.jsonl");
    CHECK_NOTHROW(log.write("{}"));
    if (std::filesystem::exists("/dev/full")) {
      tb::MetricsLog full("/dev/full");
      CHECK_NOTHROW(full.write("{\"a\":1}"));
    }
  }

  TEST_CASE("metrics.jsonl: one flushed JSON object per line") {
    CHECK(tb::metrics_json_line("eval", 10, {{"accuracy", 0.5}, {"step", 1}}, 1.25) ==
          R"({"event":"eval","step":10,"time":1.25,"accuracy":0.5,"value_step":1.0})");
    CHECK(tb::metrics_json_line("train", 3, {{"loss", std::nan("")}}, 2) ==
          R"({"event":"train","step":3,"time":2.0,"loss":null})");
    std::string now_line = tb::metrics_json_line("x", 0, {});
    CHECK(now_line.rfind(R"({"event":"x","step":0,"time":)", 0) == 0);
    TempDir dir("metrics_log");
    std::string path = dir / "run/metrics.jsonl";
    {
      tb::MetricsLog log(path);
      log.write(R"({"a":1})");
      CHECK(et::test::read_file(path) == "{\"a\":1}\n");  // flushed per line
      log.write("{\n  \"b\": 2\n}\n");
    }
    tb::MetricsLog again(path);  // appends
    again.write(R"({"c":3})");
    CHECK(et::test::read_file(path) == "{\"a\":1}\n{   \"b\": 2 }\n{\"c\":3}\n");
  }
}

TEST_SUITE("integration.tensorboard") {
  TEST_CASE("an independent Python reader (read_events.py) agrees") {
    TempDir dir("tensorboard");
    std::string path;
    {
      tb::TensorBoardWriter w(dir.path());
      w.add_scalar("train/loss", 0.25, 1);
      w.add_scalar("eval/f1", 0.1, 2);  // stored as the float32 nearest to 0.1
      w.add_scalar("lr", 3e-5, 1000000);
      path = w.path();
    }
    auto r =
        et::test::run_process({"/usr/bin/python3", ETHOST_FIXTURES_DIR "/tensorboard/read_events.py", path});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("file_version ", 0) == 0);
    CHECK(et::test::contains(r.out, " brain.Event:2\n"));
    CHECK(et::test::contains(r.out,
                             "scalar 1 train/loss 0.25\n"
                             "scalar 2 eval/f1 0.10000000149011612\n"
                             "scalar 1000000 lr 2.9999999242136255e-05\n"));
    CHECK(et::test::count_lines(r.out) == 4);
    // A corrupted byte is caught by the reader's CRC check.
    std::string bytes_ = et::test::read_file(path);
    bytes_[bytes_.size() - 6] ^= 0x01;
    et::test::write_file(dir / "bad", bytes_);
    auto bad = et::test::run_process(
        {"/usr/bin/python3", ETHOST_FIXTURES_DIR "/tensorboard/read_events.py", dir / "bad"});
    CHECK(bad.exit_code == 1);
    CHECK(et::test::contains(bad.err, "bad data checksum"));
  }
}
