#include "queue_format.hpp"

#include <algorithm>
#include <stdexcept>

#include "nodelist.hpp"
#include "slurm_time.hpp"

namespace sched::cli {
namespace {

constexpr int kMaxWidth = 1000;

std::string_view header_of(char letter) {
  switch (letter) {
    case 'i':
      return "JOBID";
    case 'j':
      return "NAME";
    case 'u':
      return "USER";
    case 't':
      return "ST";
    case 'T':
      return "STATE";
    case 'M':
      return "TIME";
    case 'l':
      return "TIME_LIMIT";
    case 'L':
      return "TIME_LEFT";
    case 'D':
      return "NODES";
    case 'N':
      return "NODELIST";
    case 'R':
      return "NODELIST(REASON)";
    case 'P':
      return "PARTITION";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'e':
      return "END_TIME";
    default:
      return "";
  }
}

std::string value_of(char letter, const QueueRow& row, double now) {
  switch (letter) {
    case 'i':
      return row.shown_id();
    case 'j':
      return row.name;
    case 'u':
      return row.user;
    case 't':
      return std::string(state_code(row.state));
    case 'T':
      return std::string(to_string(row.state));
    case 'M':
      return format_duration(row.elapsed);
    case 'l':
      return format_time_limit(row.limit);
    case 'L':
      if (row.limit <= 0) return "UNLIMITED";
      if (row.start_time < 0) return format_duration(row.limit);
      return format_duration(std::max(0.0, row.start_time + row.limit - now));
    case 'D':
      return std::to_string(row.nodes);
    case 'N':
      return compress_sorted_nodelist(row.nodelist);
    case 'R':
      if (!row.nodelist.empty()) return compress_sorted_nodelist(row.nodelist);
      return "(" + (row.reason.empty() ? std::string("None") : row.reason) + ")";
    case 'P':
      return row.partition.empty() ? std::string(kPartitionName) : row.partition;
    case 'V':
      return format_timestamp(row.submit_time);
    case 'S':
      return format_timestamp(row.start_time >= 0 ? row.start_time : row.expected_start);
    case 'e':
      if (row.end_time >= 0) return format_timestamp(row.end_time);
      if (row.start_time >= 0 && row.limit > 0) return format_timestamp(row.start_time + row.limit);
      return "N/A";
    default:
      return "";
  }
}

std::string fit(std::string value, const FormatField& field) {
  if (field.width == 0) return value;
  const auto width = static_cast<std::size_t>(field.width);
  if (value.size() > width) value.resize(width);
  const std::string pad(width - value.size(), ' ');
  return field.right ? pad + value : value + pad;
}

template <class Cell>
std::string render(const std::vector<FormatField>& fields, Cell&& cell) {
  std::string out;
  for (const auto& field : fields) {
    out += field.letter == 0 ? field.text : fit(cell(field.letter), field);
  }
  return out;
}

}  // namespace

std::vector<FormatField> parse_queue_format(std::string_view format) {
  std::vector<FormatField> fields;
  const auto literal = [&](std::string_view text) {
    if (fields.empty() || fields.back().letter != 0) fields.emplace_back();
    fields.back().text += text;
  };
  std::size_t i = 0;
  while (i < format.size()) {
    if (format[i] != '%') {
      literal(format.substr(i, 1));
      ++i;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      literal("%");
      i += 2;
      continue;
    }
    FormatField field;
    std::size_t j = i + 1;
    if (j < format.size() && (format[j] == '.' || format[j] == '-')) {
      field.right = format[j] == '.';
      ++j;
    }
    while (j < format.size() && format[j] >= '0' && format[j] <= '9') {
      field.width = field.width * 10 + (format[j] - '0');
      if (field.width > kMaxWidth) {
        throw std::invalid_argument("format width over " + std::to_string(kMaxWidth) + " in '" +
                                    std::string(format) + "'");
      }
      ++j;
    }
    if (j >= format.size()) {
      throw std::invalid_argument("format '" + std::string(format) + "' ends inside a field");
    }
    field.letter = format[j];
    if (header_of(field.letter).empty()) {
      throw std::invalid_argument("unknown format letter %" + std::string(1, field.letter) +
                                  " in '" + std::string(format) +
                                  "' (known: %i %j %u %t %T %M %l %L %D %N %R %P %V %S %e)");
    }
    fields.push_back(std::move(field));
    i = j + 1;
  }
  return fields;
}

std::string format_queue_header(const std::vector<FormatField>& fields) {
  return render(fields, [](char letter) { return std::string(header_of(letter)); });
}

std::string format_queue_row(const std::vector<FormatField>& fields, const QueueRow& row,
                             double now) {
  return render(fields, [&](char letter) { return value_of(letter, row, now); });
}

}  // namespace sched::cli
