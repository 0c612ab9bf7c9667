// Small RAII wrappers over the sqlite3 C API, for the state store: a
// connection, prepared statements and a cache of them. Failures throw
// SqliteError with SQLite's message; the store adds what it was doing.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sched::store {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // the primary result code (SQLITE_NOTADB, ...)

 private:
  int code_;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as ?1, ?2, ... in the SQL.
  void bind_int(int index, std::int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view value);
  void bind_null(int index);

  bool step();   // true: a row is ready; false: the statement is done
  void reset();  // ready to run again, parameters cleared

  // Columns are numbered from 0.
  bool is_null(int column) const;
  std::int64_t column_int(int column) const;
  double column_double(int column) const;  // NULL (how SQLite keeps a NaN) reads as NaN
  std::string column_text(int column) const;

 private:
  [[noreturn]] void fail(int rc, std::string_view doing) const;

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A cached statement in use. It is reset when the scope ends, so that a read
// does not keep its snapshot open (that would stop WAL checkpoints).
class StatementUse {
 public:
  explicit StatementUse(Statement& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;

  Statement* operator->() const { return &statement_; }
  Statement& operator*() const { return statement_; }

 private:
  Statement& statement_;
};

class Database {
 public:
  explicit Database(const std::string& path);  // read-write, created if missing
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const char* sql);                     // statements without results
  std::int64_t query_int(const char* sql);        // the first column of the first row
  std::string query_text(const char* sql);        // likewise
  StatementUse prepared(const std::string& sql);  // prepared once, then reused
  bool in_transaction() const;                    // not in autocommit mode

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

}  // namespace sched::store
