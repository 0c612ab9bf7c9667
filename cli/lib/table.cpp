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
    : columns_(std::move(columns)), gap_(gap) {}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> widths(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = display_width(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  const auto add_line = [&](const auto& cell_of) {
    std::string line;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_of(c);
      const std::size_t fill = widths[c] - display_width(cell);
      if (c > 0) line.append(gap_, ' ');
      if (columns_[c].align == Align::Right) line.append(fill, ' ');
      line += cell;
      if (columns_[c].align == Align::Left) line.append(fill, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  };
  add_line([&](std::size_t c) -> const std::string& { return columns_[c].header; });
  if (underline_) {
    std::vector<std::string> dashes;
    for (std::size_t width : widths) dashes.emplace_back(width, '-');
    add_line([&](std::size_t c) -> const std::string& { return dashes[c]; });
  }
  for (const auto& row : rows_) {
    add_line([&](std::size_t c) -> const std::string& { return row[c]; });
  }
  return out;
}

}  // namespace sched::cli
