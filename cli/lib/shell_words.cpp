#include "shell_words.hpp"

namespace sched::cli {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

ShellWords split_shell_words(std::string_view text) {
  ShellWords out;
  std::string word;
  bool in_word = false;  // a word has begun, even if it is still empty ("")
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_blank(c)) {
      if (in_word) out.words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\'') {
      const auto close = text.find('\'', i + 1);
      if (close == std::string_view::npos) {
        out.error = "unterminated '...'";
        return out;
      }
      word += text.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        const bool escapes = text[j] == '\\' && j + 1 < text.size() &&
                             std::string_view("$`\"\\").find(text[j + 1]) != std::string_view::npos;
        if (escapes) ++j;
        word += text[j];
      }
      if (j >= text.size()) {
        out.error = "unterminated \"...\"";
        return out;
      }
      in_word = true;
      i = j;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.words.push_back(std::move(word));
  return out;
}

}  // namespace sched::cli
