"""Pure rules of the search index (no Django): what text a row or summary contributes,
how a person's words become a query, how a marked snippet becomes safe fragments."""
