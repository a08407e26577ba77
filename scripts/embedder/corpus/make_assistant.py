#!/usr/bin/env python3
"""Write assistant.txt: short personal-assistant memories and the questions people ask about them.

Hand-written templates and slot lists (people, places, foods, jobs, dates ...) expanded with a fixed seed.
Written for this project from scratch; nothing here comes from tests/data (convmem) or rustdocs.
Usage: make_assistant.py [N_PER_TEMPLATE]  -> scripts/embedder/corpus/assistant.txt (one text per line)
"""
import pathlib, random, sys

rng = random.Random(20240517)
FIRST = """Aiko Amara Anders Anika Arjun Astrid Bea Benedikt Bilal Bruno Camila Carmen Chidi Chloe Dara Dmitri Elif Eliza
Emeka Esme Farah Felix Fiona Gabriel Greta Hana Hector Ines Ingrid Isaac Jamal Janek Jiho Joaquin Kai Kamala Kenji Lars
Leila Lena Lucia Magnus Maile Marco Mateo Mei Mira Nadia Nikhil Noor Olu Omar Oskar Paloma Pavel Priya Quentin Rafael
Rania Ravi Rosa Ruth Sade Samir Sanna Soren Sunita Tariq Thea Tomas Uma Valentina Viktor Wen Xavier Yara Yusuf Zainab Zofia
Tobias Hiroshi Nell Ottilie Declan Maeve Rohan Anouk Bongani Ciara""".split()
REL = ["sister", "brother", "mother", "father", "daughter", "son", "wife", "husband", "partner", "cousin", "aunt",
       "uncle", "grandmother", "grandfather", "niece", "nephew", "best friend", "roommate", "neighbor", "colleague",
       "boss", "mother-in-law", "stepdad", "godson", "twin sister"]
CITY = """Lisbon Oslo Nairobi Osaka Toronto Denver Krakow Lyon Porto Melbourne Austin Seattle Bogota Lima Hanoi Seoul Tallinn
Dublin Edinburgh Marseille Valencia Bologna Munich Leipzig Zurich Reykjavik Helsinki Accra Cape Town Cairo Istanbul Tbilisi
Kyoto Taipei Manila Auckland Vancouver Montreal Chicago Boston Atlanta Phoenix Glasgow Bristol Ghent Utrecht Prague Vienna""".split("\n")
CITY = [c for line in CITY for c in line.split()] + ["Cape Town", "New Orleans", "San Diego", "Buenos Aires", "Mexico City"]
CITY = [c for c in CITY if c not in ("Cape", "Town", "New", "Orleans", "San", "Diego", "Buenos", "Aires", "Mexico", "City")]
COUNTRY = ["Portugal", "Japan", "Kenya", "Canada", "Peru", "Vietnam", "Iceland", "Morocco", "Greece", "Chile", "Norway",
           "Georgia", "New Zealand", "Ireland", "Thailand", "Italy", "Spain", "Scotland", "Mexico", "Ghana", "Croatia"]
FOOD = ["sushi", "ramen", "tacos", "pad thai", "lasagna", "falafel", "pho", "paella", "dumplings", "curry", "pierogi",
        "shakshuka", "risotto", "burritos", "bibimbap", "moussaka", "ceviche", "goulash", "jollof rice", "dim sum",
        "mushroom soup", "lentil stew", "grilled salmon", "veggie burgers", "margherita pizza", "banana bread"]
DRINK = ["black coffee", "oat milk latte", "green tea", "chai", "sparkling water", "hot chocolate", "espresso",
         "chamomile tea", "iced americano", "matcha", "orange juice", "decaf with a splash of milk", "kombucha"]
DISLIKE = ["cilantro", "olives", "mushrooms", "blue cheese", "spicy food", "raisins", "mayonnaise", "anchovies",
           "coconut", "eggplant", "liquorice", "pickles", "tofu", "oysters"]
ALLERGY = ["peanuts", "shellfish", "penicillin", "cats", "pollen", "gluten", "dust mites", "bee stings", "latex",
           "tree nuts", "dairy", "sesame"]
JOB = ["nurse", "software engineer", "architect", "high school teacher", "accountant", "pharmacist", "chef",
       "data analyst", "graphic designer", "electrician", "veterinarian", "lawyer", "physiotherapist", "journalist",
       "product manager", "carpenter", "pilot", "librarian", "dentist", "marketing lead", "research chemist",
       "UX researcher", "paramedic", "translator", "civil engineer"]
COMPANY = ["a logistics startup", "the city hospital", "a small bakery", "a bank downtown", "a game studio",
           "the public library", "a solar energy firm", "a law office", "a design agency", "the university",
           "an airline", "a nonprofit", "a bike shop", "a biotech lab", "the local newspaper", "a consulting firm"]
HOBBY = ["rock climbing", "pottery", "birdwatching", "chess", "sourdough baking", "trail running", "knitting",
         "salsa dancing", "woodworking", "photography", "gardening", "playing the cello", "sailing", "surfing",
         "board games", "calligraphy", "cycling", "yoga", "painting watercolors", "learning Japanese"]
MUSIC = ["jazz", "old soul records", "heavy metal", "classical piano", "K-pop", "folk music", "techno", "bossa nova",
         "country music", "hip hop", "opera", "indie rock", "film soundtracks", "reggae"]
BOOKGENRE = ["science fiction", "mystery novels", "history books", "poetry", "fantasy series", "biographies",
             "graphic novels", "cookbooks", "thrillers", "books about economics"]
PET = ["a golden retriever", "a tabby cat", "two rabbits", "a parrot", "a corgi", "a black cat", "a beagle",
       "a goldfish", "a rescue greyhound", "a hamster", "a tortoise", "three chickens"]
PETNAME = ["Biscuit", "Mochi", "Pepper", "Luna", "Ziggy", "Olive", "Noodle", "Rufus", "Clementine", "Pixel", "Maple",
           "Otis", "Waffles", "Juniper"]
MONTH = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
         "November", "December"]
DAY = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SPORT = ["football", "basketball", "tennis", "the Tour de France", "cricket", "Formula 1", "baseball", "rugby",
         "ice hockey", "volleyball"]
DEVICE = ["laptop", "phone", "tablet", "e-reader", "smartwatch", "headphones", "router", "car", "bike", "camera"]
MED = ["blood pressure pills", "vitamin D", "an inhaler", "allergy tablets", "iron supplements", "thyroid medication",
       "insulin", "eye drops", "antibiotics", "melatonin"]
DOCTOR = ["dentist", "dermatologist", "eye doctor", "physiotherapist", "cardiologist", "GP", "therapist",
          "orthodontist", "allergist"]
LANG = ["Spanish", "Portuguese", "Korean", "German", "Mandarin", "French", "Italian", "Swahili", "Arabic", "Dutch",
        "Greek", "Turkish", "Hindi", "Polish"]
COLOR = ["navy blue", "forest green", "mustard yellow", "burgundy", "lavender", "teal", "charcoal grey", "coral"]
PROJECT = ["the website redesign", "the quarterly budget", "the mobile app launch", "the data migration",
           "the conference talk", "the grant proposal", "the onboarding guide", "the kitchen renovation",
           "the wedding planning", "the thesis draft", "the product roadmap", "the office move"]
SUBS = ["Netflix", "Spotify", "the gym membership", "a meal kit service", "the newspaper subscription",
        "cloud storage", "a language app", "the streaming service", "the climbing gym pass"]
CAR = ["an old Volvo", "a red Mini", "an electric hatchback", "a pickup truck", "a hybrid SUV", "a vintage Beetle"]


def date():
    return f"{rng.choice(MONTH)} {rng.randint(1, 28)}"


def year():
    return str(rng.randint(1948, 2024))


def P(): return rng.choice(FIRST)


def fill(t):
    out, i = "", 0
    slots = {"P": P, "Q": P, "REL": lambda: rng.choice(REL), "CITY": lambda: rng.choice(CITY),
             "COUNTRY": lambda: rng.choice(COUNTRY), "FOOD": lambda: rng.choice(FOOD), "DRINK": lambda: rng.choice(DRINK),
             "DISLIKE": lambda: rng.choice(DISLIKE), "ALLERGY": lambda: rng.choice(ALLERGY), "JOB": lambda: rng.choice(JOB),
             "COMPANY": lambda: rng.choice(COMPANY), "HOBBY": lambda: rng.choice(HOBBY), "MUSIC": lambda: rng.choice(MUSIC),
             "BOOK": lambda: rng.choice(BOOKGENRE), "PET": lambda: rng.choice(PET), "PETNAME": lambda: rng.choice(PETNAME),
             "DATE": date, "YEAR": year, "MONTH": lambda: rng.choice(MONTH), "DAY": lambda: rng.choice(DAY),
             "SPORT": lambda: rng.choice(SPORT), "DEVICE": lambda: rng.choice(DEVICE), "MED": lambda: rng.choice(MED),
             "DOCTOR": lambda: rng.choice(DOCTOR), "LANG": lambda: rng.choice(LANG), "COLOR": lambda: rng.choice(COLOR),
             "PROJECT": lambda: rng.choice(PROJECT), "SUBS": lambda: rng.choice(SUBS), "CAR": lambda: rng.choice(CAR),
             "N": lambda: str(rng.randint(2, 12)), "TIME": lambda: f"{rng.randint(6, 11)}:{rng.choice(['00', '15', '30', '45'])}",
             "AGE": lambda: str(rng.randint(3, 90)), "MONEY": lambda: str(rng.choice([15, 40, 120, 250, 600, 1200, 3000]))}
    import re
    return re.sub(r"\{(\w+)\}", lambda m: slots[m.group(1)](), t)


# Memories (statements a user tells an assistant) and questions that paraphrase them, grouped by topic.
TEMPLATES = """
I prefer {DRINK} in the morning and never drink coffee after {TIME} pm.
{P} can't stand {DISLIKE}, so leave them out of anything I cook for her.
My favorite food is {FOOD}; I could eat it every week.
{P} is allergic to {ALLERGY} and carries an epipen.
I'm allergic to {ALLERGY}, please remember that when booking restaurants.
Remind me that {P} is vegetarian but eats fish occasionally.
I stopped eating meat in {YEAR} for health reasons.
My {REL} {P} lives in {CITY} and works as a {JOB}.
My {REL}'s birthday is on {DATE}.
{P}'s birthday is {DATE}, and she loves handmade gifts.
{P} turned {AGE} this year and had a party at the lake house.
My {REL} {P} just had a baby girl named {Q}.
We adopted {PET} named {PETNAME} in {MONTH}.
{PETNAME} the dog has a vet appointment every six months.
Our cat {PETNAME} only eats the salmon flavored food.
I work as a {JOB} at {COMPANY}.
I started a new job at {COMPANY} in {MONTH} {YEAR}.
My manager {P} wants the report on {PROJECT} by {DAY}.
The deadline for {PROJECT} moved to {DATE}.
I have a one-on-one with {P} every {DAY} at {TIME}.
I'm leading {PROJECT} this quarter with {P} and {Q}.
I took {N} days off in {MONTH} to rest.
I've been {HOBBY} on weekends since {YEAR}.
{P} got me into {HOBBY} last summer.
I listen to {MUSIC} while I work.
{P} only listens to {MUSIC} in the car.
I've been reading a lot of {BOOK} lately.
I'm learning {LANG} for a trip to {COUNTRY}.
I've studied {LANG} for {N} years but still struggle with speaking.
I'm flying to {CITY} on {DATE} for a conference.
We spent our honeymoon in {COUNTRY} in {YEAR}.
Next {MONTH} I'm visiting {P} in {CITY}.
My passport expires on {DATE} {YEAR}, renew it before traveling.
I always book an aisle seat on long flights.
I get seasick, so no ferries or boat tours please.
The hotel in {CITY} is booked from {DATE} for {N} nights.
I take {MED} every morning with breakfast.
My {DOCTOR} appointment is on {DAY} at {TIME}.
I've been sleeping badly since I started the night shifts.
I'm training for a half marathon in {MONTH}.
I hurt my knee {HOBBY} and I'm seeing a physiotherapist.
My blood pressure was a bit high at the last checkup.
I'm trying to walk ten thousand steps a day.
I moved to {CITY} in {YEAR} from {Q}'s hometown.
We're renovating the kitchen and the contractor is called {P}.
My car is {CAR} and it needs new tires.
The {DEVICE} I bought in {MONTH} stopped charging.
I pay for {SUBS} every month, about {MONEY} dollars.
I want to cancel {SUBS} before the next billing date.
I'm saving {MONEY} dollars a month for a new {DEVICE}.
I owe {P} {MONEY} dollars for the concert tickets.
My favorite color is {COLOR}, and I painted the bedroom that color.
I support {SPORT} and never miss a match.
{P} and I watch {SPORT} together every weekend.
My {REL} {P} is getting married on {DATE} in {CITY}.
Our anniversary is {DATE}; we met at a friend's party in {CITY}.
{P} and {Q} broke up last month, don't mention it at dinner.
I'm hosting dinner for {N} people on {DAY}; {P} is bringing dessert.
{P} recommended a great {FOOD} place near the station.
I volunteer at the animal shelter every other {DAY}.
I'm afraid of heights, so skip the cable car.
I wake up at {TIME} on weekdays and go to bed around eleven.
My kids are {AGE} and {AGE}, and the youngest starts school in {MONTH}.
{P} is my daughter's piano teacher; lessons are on {DAY}.
My {REL} had surgery on {DATE} and is recovering at home.
I can't eat {ALLERGY}, it makes me really sick.
I'm lactose intolerant, so I use oat milk.
I'd rather take the train than fly when the trip is under five hours.
My grandmother's recipe for {FOOD} is in the blue notebook.
I keep the spare key with {P} next door.
I've been meaning to call {P} about {PROJECT}.
I quit smoking in {YEAR}.
The dentist said I need a filling in {MONTH}.
I ran my first marathon in {CITY} in {YEAR}.
I graduated in {YEAR} with a degree in economics.
{P} works night shifts at the hospital, so text instead of calling.
""".strip().split("\n")

QUESTIONS = """
What do I usually drink in the morning?
What kind of coffee or tea do I like?
Which foods does {P} hate?
What should I avoid when cooking for {P}?
What's my favorite dish?
Is {P} allergic to anything?
What am I allergic to?
Does {P} eat meat?
When did I become vegetarian?
Where does my {REL} live?
What does my {REL} do for a living?
When is my {REL}'s birthday?
What should I get {P} for her birthday?
How old is {P} now?
What's the name of {P}'s baby?
What's our dog called?
When does the dog need to see the vet?
Which food does the cat eat?
Where do I work?
When did I start my current job?
What does my boss need from me this week?
When is the {PROJECT} due?
When is my weekly meeting with my manager?
Who am I working with on {PROJECT}?
How much vacation did I take?
What do I do on weekends?
Who introduced me to {HOBBY}?
What music do I like while working?
What does {P} listen to when driving?
What have I been reading recently?
Why am I learning {LANG}?
How long have I been studying {LANG}?
When is my flight to {CITY}?
Where did we go on our honeymoon?
Who am I visiting next month?
When does my passport expire?
Which seat do I prefer on planes?
Do I get motion sickness?
How many nights is the hotel booked for?
What medication do I take daily?
When is my next {DOCTOR} appointment?
Why have I been sleeping poorly?
What race am I training for?
How did I hurt my knee?
What did the doctor say at my last checkup?
What's my daily step goal?
When did I move to {CITY}?
Who is doing the kitchen renovation?
What car do I drive?
Which gadget is broken?
What subscriptions am I paying for?
Which subscription did I want to cancel?
What am I saving money for?
How much do I owe {P}?
What's my favorite color?
Which sport do I follow?
What do {P} and I watch together?
When is my {REL}'s wedding?
When is our anniversary and where did we meet?
Is there anything I shouldn't bring up at dinner?
Who is bringing dessert on {DAY}?
Where's a good place for {FOOD} nearby?
Where do I volunteer?
Am I afraid of anything?
What time do I wake up on weekdays?
How old are my kids?
Who teaches my daughter piano?
How is my {REL} recovering after the operation?
Which foods make me ill?
Can I drink regular milk?
Do I prefer trains or planes?
Where is grandma's recipe?
Who has my spare key?
Who was I supposed to call?
When did I stop smoking?
What did the dentist tell me?
Where did I run my first marathon?
What did I study at university?
Why shouldn't I call {P} during the day?
""".strip().split("\n")

# Free-form memories and questions written by hand (not templated).
FREE = """
Remember that the wifi password for the cabin is taped under the router.
The plumber is coming Thursday between eight and noon.
We decided to paint the fence white instead of green.
I parked on level three, row F, near the elevator.
The book club is reading a novel about a lighthouse keeper this month.
Mom prefers phone calls on Sunday evenings.
The kids' school closes early on the last Friday of every month.
Our landlord raised the rent by five percent starting in spring.
I told Samir I'd help him move apartments next Saturday.
Dad's hearing aid batteries are size 312.
Bring an umbrella to the picnic, rain is likely after lunch.
I keep forgetting to water the basil on the balcony.
The garage door code changed after the break-in.
I've switched to a standing desk and my back feels better.
The recipe needs to rest overnight in the fridge.
Anything interesting happen at the family reunion?
What did we decide about the fence?
Where did I leave the car?
When is the plumber supposed to arrive?
How much is the rent going up?
Which batteries does Dad's hearing aid need?
Did I promise to help someone this weekend?
Is my back any better these days?
What book is the club reading?
When should I call my mother?
""".strip().split("\n")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    out = set()
    for t in TEMPLATES + QUESTIONS:
        for _ in range(n):
            out.add(fill(t))
    out.update(FREE)
    lines = sorted(out)
    rng.shuffle(lines)
    p = pathlib.Path(__file__).with_name("assistant.txt")
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} texts from {len(TEMPLATES)} memory + {len(QUESTIONS)} question templates + {len(FREE)} free -> {p}")


if __name__ == "__main__":
    main()
