// A column-aligned text table, the way squeue, sinfo and sacct print theirs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sched::cli {

enum class Align { Left, Right };

struct Column {
  std::string header;
  Align align = Align::Left;
};

class Table {
 public:
  // `gap` spaces separate neighbouring columns.
  explicit Table(std::vector<Column> columns, std::size_t gap = 2);

  // Throws std::invalid_argument when the row has not one cell per column.
  void add_row(std::vector<std::string> cells);

  // A line of dashes under the headers, as sacct prints.
  void set_underline(bool underline) { underline_ = underline; }

  // The header line, the dashes if asked for, then the rows; every line ends
  // in '\n' and carries no trailing spaces. Headers are aligned like their
  // columns; a table without rows is just its header.
  std::string render() const;

  std::size_t row_count() const { return rows_.size(); }

 private:
  std::vector<Column> columns_;
  std::size_t gap_;
  bool underline_ = false;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> widths_;  // of each column so far, headers included
};

// Width on a terminal, counted in UTF-8 code points so that names with
// accents line up (wide CJK characters are not accounted for).
std::size_t display_width(std::string_view text);

}  // namespace sched::cli
