"""SQLAlchemy (Debian's python3-sqlalchemy, psycopg2 dialect) ORM against
lakesoul serve: create_all with an autoincrement primary key (SERIAL) and a
server default, session inserts that fetch the new keys with INSERT …
RETURNING, Core insert/update/delete … RETURNING, a query back, nested
transactions (SAVEPOINT / ROLLBACK TO / RELEASE). Prints one
line per fact for the Go test; any exception fails the run.

usage: sqlalchemy_orm.py <url> <schema>
"""
import sys

import sqlalchemy as sa
from sqlalchemy.orm import Session, declarative_base

url, schema = sys.argv[1], sys.argv[2]
engine = sa.create_engine(url)
with engine.begin() as conn:
    conn.execute(sa.text("CREATE SCHEMA " + schema))

Base = declarative_base()


class Item(Base):
    __tablename__ = "item"
    __table_args__ = {"schema": schema}
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.String, nullable=False)
    qty = sa.Column(sa.Integer, server_default=sa.text("3"))


Base.metadata.create_all(engine)
with Session(engine) as session:
    items = [Item(name="a"), Item(name="b", qty=9)]
    session.add_all(items)
    session.commit()
    print("ORM_IDS", [i.id for i in items])
    print("ORM_QTY", [i.qty for i in items])

t = Item.__table__
with engine.begin() as conn:
    r = conn.execute(sa.insert(t).values(name="c").returning(t.c.id, t.c.qty))
    print("CORE_INSERT", [tuple(x) for x in r])
    r = conn.execute(sa.update(t).where(t.c.name == "a").values(qty=t.c.qty + 1).returning(t.c.id, t.c.qty))
    print("CORE_UPDATE", [tuple(x) for x in r])
    r = conn.execute(sa.delete(t).where(t.c.id == 2).returning(t.c.name))
    print("CORE_DELETE", [tuple(x) for x in r])
with Session(engine) as session:
    print("ROWS", [(i.id, i.name, i.qty) for i in session.query(Item).order_by(Item.id)])

# Nested transactions are savepoints: the failed one rolls back alone.
with Session(engine) as session:
    session.add(Item(name="n1"))
    try:
        with session.begin_nested():
            session.add(Item(name=None))
            session.flush()
    except sa.exc.IntegrityError as e:
        print("NESTED_ERROR", e.orig.pgcode)
    with session.begin_nested():
        session.add(Item(name="n2"))
    session.commit()
    print("NESTED", sorted(i.name for i in session.query(Item)))
print("DONE")
