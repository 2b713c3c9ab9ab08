"""Serving a class: several app processes behind haproxy, the store (SQLite or Redis), worker
processes for heavy jobs, and rooms where students follow a teacher."""
