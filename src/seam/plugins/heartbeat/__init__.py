"""The heartbeat: a periodic, lean turn over a checklist that stays silent unless it matters."""
