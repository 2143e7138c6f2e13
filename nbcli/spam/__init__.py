"""Mail filtering: `nbcli filter`, the spamd protocol and the daemon (`nbcli serve`)."""
