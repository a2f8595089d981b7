DROP TABLE IF EXISTS lakesoul.flight_ticket_key;
