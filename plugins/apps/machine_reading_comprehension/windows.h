// windows.h: a question and a long context as BERT inputs — the question's tokens cut to max_query_length,
// the context's tokens in doc_stride sliding windows ([CLS] question [SEP] window [SEP]), each token mapped
// back to its code points in the context, the "max context" window of each token, and the answer's token
// span per window (EasyNLP's / Google BERT's run_squad.py windows; HF's tokenizer(question, context) when
// everything fits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ethost/text/tokenizer.h>

namespace et::apps::mrc {

struct WindowOptions {
  int64_t max_seq_length = 384;
  int64_t max_query_length = 64;
  int64_t doc_stride = 128;  // step between window starts, in tokens
};

struct Window {
  std::vector<int32_t> input_ids;
  std::vector<int8_t> token_type_ids;
  // Per position: the code points [char_start, char_end) of the context it covers; -1 outside the context.
  std::vector<int32_t> char_start, char_end;
  std::vector<int8_t> max_context;  // 1 where this window gives the token its most context (BERT's rule)
  int32_t start_position = 0, end_position = 0;  // the answer's token span here; 0/0 ([CLS]) if not inside
  bool has_answer = false;
};

struct Windowed {
  std::vector<Window> windows;
  int64_t query_tokens = 0, query_cut = 0;  // question tokens kept / cut at max_query_length
  int64_t context_tokens = 0;
  int64_t invalid_utf8 = 0;
  std::string error;  // non-empty: the row cannot be windowed (why)
};

// answer_start / answer_end: the answer's code points in the context, [start, end); -1: no answer
// (prediction).
Windowed make_windows(const text::Tokenizer& tok, const std::string& question, const std::string& context,
                      const WindowOptions& options, int64_t answer_start = -1, int64_t answer_end = -1);

// The code points of a UTF-8 string (false when it is not valid UTF-8).
bool code_points(const std::string& text, std::u32string& out);
std::string utf8(const std::u32string& text);

// Where an answer is in the context: answer_start when the text is there, else the occurrence of the text
// nearest to answer_start (any occurrence when answer_start < 0); -1 when the text is not in the context.
int64_t locate_answer(const std::u32string& context, const std::u32string& answer, int64_t answer_start);

}  // namespace et::apps::mrc
