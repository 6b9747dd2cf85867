"""work_dir on disk, shared by the emit pipeline and the executor: its lock and all-or-nothing
writes. Imports scriptast.common and scriptast.errors."""
