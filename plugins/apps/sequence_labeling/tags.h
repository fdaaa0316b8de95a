// tags.h: tag sequences for sequence labeling — a tag's prefix and type, conlleval's chunk start/end rules,
// the entities (chunks) of a tag sequence, tags from character spans (CLUENER), BIO and BIOES.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace et::apps::sequence_labeling {

enum class Scheme { bio, bioes };

// "B-PER" -> {"B", "PER"}; "O" -> {"O", ""}; a tag without '-' is its own prefix with no type (conlleval).
struct TagParts {
  std::string prefix;
  std::string type;
};
TagParts split_tag(const std::string& tag);

// conlleval's rules: does a chunk end between prev and cur / start at cur? (B/I/O as in conlleval.pl;
// E and S as its IOBES port: a chunk always ends after E or S and always starts at B or S.)
bool chunk_end(const TagParts& prev, const TagParts& cur);
bool chunk_start(const TagParts& prev, const TagParts& cur);

// An entity: tokens [start, end) of one type.
struct Chunk {
  std::string type;
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const Chunk& o) const { return type == o.type && start == o.start && end == o.end; }
};
// The chunks of a sentence's tags, by the rules above (what conlleval counts as found).
std::vector<Chunk> chunks(const std::vector<std::string>& tags);

// The tags of n tokens with the given entities (non-overlapping, inside [0, n)). Returns "" or the reason
// the spans are invalid.
std::string tags_from_chunks(int64_t n, const std::vector<Chunk>& entities, Scheme scheme,
                             std::vector<std::string>& tags);

// The labels a scheme gives one entity type: B-t, I-t (BIOES: also E-t, S-t).
std::vector<std::string> labels_of_type(const std::string& type, Scheme scheme);

}  // namespace et::apps::sequence_labeling
