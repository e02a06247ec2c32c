# The engine-side index is created for the vendor in use (RunSQL guarded by vendor):
# an FTS5 table and its triggers on SQLite, a generated tsvector and its GIN index on
# PostgreSQL. Other vendors get the tables without an engine index (search answers nothing).

import django.db.models.deletion
from django.db import migrations, models

SQLITE = [
    "CREATE VIRTUAL TABLE search_fts USING fts5(text, content='search_searchdoc', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER search_doc_ai AFTER INSERT ON search_searchdoc BEGIN "
    "INSERT INTO search_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER search_doc_ad AFTER DELETE ON search_searchdoc BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER search_doc_au AFTER UPDATE ON search_searchdoc BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO search_fts(rowid, text) VALUES (new.id, new.text); END",
]
SQLITE_UNDO = [
    "DROP TRIGGER IF EXISTS search_doc_au",
    "DROP TRIGGER IF EXISTS search_doc_ad",
    "DROP TRIGGER IF EXISTS search_doc_ai",
    "DROP TABLE IF EXISTS search_fts",
]
POSTGRES = [
    "ALTER TABLE search_searchdoc ADD COLUMN vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED",
    "CREATE INDEX search_searchdoc_vector_gin ON search_searchdoc USING GIN (vector)",
]
POSTGRES_UNDO = [
    "DROP INDEX IF EXISTS search_searchdoc_vector_gin",
    "ALTER TABLE search_searchdoc DROP COLUMN IF EXISTS vector",
]


def engine_index(apps, schema_editor):
    statements = {"sqlite": SQLITE, "postgresql": POSTGRES}.get(schema_editor.connection.vendor, [])
    for statement in statements:
        schema_editor.execute(statement)


def engine_index_undo(apps, schema_editor):
    statements = {"sqlite": SQLITE_UNDO, "postgresql": POSTGRES_UNDO}.get(
        schema_editor.connection.vendor, []
    )
    for statement in statements:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("transcripts", "0006_slot_drop_summary_state"),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchDoc",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("kind", models.CharField(choices=[("row", "Transcript"), ("summary", "Summary")], max_length=8)),
                ("seq", models.IntegerField(help_text="the row's position in the session (rows only)")),
                ("cursor", models.CharField(blank=True, help_text="the row's ts", max_length=100)),
                ("turn", models.IntegerField(default=0, help_text="the user turn it belongs to (0: none)")),
                ("role", models.CharField(blank=True, max_length=64)),
                ("text", models.TextField()),
                ("session", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="transcripts.session")),
            ],
            options={
                "indexes": [models.Index(fields=["session", "kind", "seq"], name="searchdoc_session_seq_idx")],
            },
        ),
        migrations.CreateModel(
            name="SearchMark",
            fields=[
                ("session", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="+", serialize=False, to="transcripts.session")),
                ("cursor", models.CharField(blank=True, help_text='"": nothing indexed yet', max_length=100)),
                ("rows", models.IntegerField(default=0, help_text="rows read so far (the next seq)")),
                ("turns", models.IntegerField(default=0, help_text="user turns through the last row read")),
            ],
        ),
        migrations.RunPython(engine_index, engine_index_undo),
    ]
