#include "sqlite_db.hpp"

#include <limits>

namespace sched::store {

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  // PERSISTENT: the statement is cached for the life of the connection.
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(rc, "preparing a statement");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::fail(int rc, std::string_view doing) const {
  std::string message(doing);
  message += ": ";
  message += sqlite3_errmsg(db_);
  throw SqliteError(rc & 0xff, message);
}

void Statement::bind_int(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) fail(rc, "binding a parameter");
}

void Statement::bind_double(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) fail(rc, "binding a parameter");
}

void Statement::bind_text(int index, std::string_view value) {
  // TRANSIENT: SQLite copies, so temporaries may be bound.
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(rc, "binding a parameter");
}

void Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) fail(rc, "binding a parameter");
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc, "running a statement");
}

void Statement::reset() {
  // The result repeats the last step's error, which step() has reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const {
  if (is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  const int bytes = sqlite3_column_bytes(stmt_, column);  // after _text, as SQLite asks
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

Database::Database(const std::string& path) {
  const int rc =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    // SQLite allocates a handle even when opening fails; it carries the message.
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw SqliteError(rc & 0xff, message);
  }
}

Database::~Database() {
  cache_.clear();  // statements first: close_v2 would otherwise defer closing
  sqlite3_close_v2(db_);
}

void Database::exec(const char* sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw SqliteError(rc & 0xff, message);
  }
}

std::int64_t Database::query_int(const char* sql) {
  Statement statement(db_, sql);
  return statement.step() ? statement.column_int(0) : 0;
}

std::string Database::query_text(const char* sql) {
  Statement statement(db_, sql);
  return statement.step() ? statement.column_text(0) : std::string();
}

StatementUse Database::prepared(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    it = cache_.emplace(sql, std::make_unique<Statement>(db_, sql)).first;
  }
  return StatementUse(*it->second);
}

bool Database::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace sched::store
