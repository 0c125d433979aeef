"""Statement facts: the cells of statement tables read as facts (:mod:`.tables`), the inline XBRL tags of an HTML
filing (:mod:`.xbrl`), figures printed in prose (:mod:`.figures`) and finding stored facts (:mod:`.lookup`)."""
