#include "table.hpp"

#include <algorithm>
#include <stdexcept>

namespace sched::cli {

std::size_t display_width(std::string_view text) {
  // Continuation bytes (10xxxxxx) do not start a code point.
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

Table::Table(std::vector<Column> columns, std::size_t gap)
    : columns_(std::move(columns)), gap_(gap) {
  for (const Column& column : columns_) widths_.push_back(display_width(column.header));
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  }
  // Widths as rows come, so that rendering measures each cell once more only.
  for (std::size_t c = 0; c < cells.size(); ++c) {
    widths_[c] = std::max(widths_[c], display_width(cells[c]));
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::size_t line_width = 0;
  for (std::size_t width : widths_) line_width += width + gap_;
  std::string out;
  out.reserve((rows_.size() + 2) * (line_width + 1));
  const auto add_line = [&](const auto& cell_of) {
    const std::size_t start = out.size();
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_of(c);
      const std::size_t fill = widths_[c] - display_width(cell);
      if (c > 0) out.append(gap_, ' ');
      if (columns_[c].align == Align::Right) out.append(fill, ' ');
      out += cell;
      if (columns_[c].align == Align::Left) out.append(fill, ' ');
    }
    // No trailing spaces (the line's own: an empty line stays empty).
    std::size_t end = out.size();
    while (end > start && out[end - 1] == ' ') --end;
    out.resize(end);
    out += '\n';
  };
  add_line([&](std::size_t c) -> const std::string& { return columns_[c].header; });
  if (underline_) {
    std::vector<std::string> dashes;
    for (std::size_t width : widths_) dashes.emplace_back(width, '-');
    add_line([&](std::size_t c) -> const std::string& { return dashes[c]; });
  }
  for (const auto& row : rows_) {
    add_line([&](std::size_t c) -> const std::string& { return row[c]; });
  }
  return out;
}

}  // namespace sched::cli
